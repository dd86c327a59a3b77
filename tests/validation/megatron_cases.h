// SPDX-License-Identifier: Apache-2.0
// The cases of a100_megatron.yaml (published A100 measurements: Narayanan et al. SC'21 Table 1;
// Korthikanti et al. 2022 Table 5 and its memory table) as scenarios, simulated under a set of
// modelled effects: shared by the validation table and its per-effect breakdown.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sim/models/effects.h"

namespace tessera::validation {

struct Row {
  std::string id;
  std::string metric;
  double predicted = 0.0;
  double measured = 0.0;
  std::string note;
  bool timing = true;  // a step time or throughput (false: a memory figure)
  [[nodiscard]] double error() const { return (predicted - measured) / measured; }
};

// Every row of the document: Narayanan's throughput rows, then per Korthikanti case its step
// times, MFU, HFU and (when `memory`) the three memory rows.
std::vector<Row> megatron_rows(const YAML::Node& doc, const models::Effects& effects,
                               bool memory = true);

// One layer of a Korthikanti case (the document's korthikanti2022_table4): the simulated span
// of a middle layer's forward and of its backward (with its recomputed forward), per
// configuration, beside the measured milliseconds.
struct LayerRow {
  std::string config;
  double forward_ms = 0.0;
  double backward_ms = 0.0;
  double measured_forward_ms = 0.0;
  double measured_backward_ms = 0.0;
};
std::vector<LayerRow> korthikanti_layer_rows(const YAML::Node& doc, const models::Effects& effects);

}  // namespace tessera::validation
