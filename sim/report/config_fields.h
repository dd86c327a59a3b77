// SPDX-License-Identifier: Apache-2.0
// The run's configuration as named fields in a fixed order (parallelism, batch, recompute,
// schedule, cluster), for summary.json and for tables that put one run per row.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/report/run_label.h"

namespace tessera::sim::report {

struct ConfigField {
  std::string name;      // the summary.json key, also fit for a CSV header
  nlohmann::json value;  // a number, a bool or a string
};

// tp, pp, dp, sp, micro_batch, global_batch, seq_len, recompute, attention, schedule,
// devices, hardware, topology.
std::vector<ConfigField> config_fields(const RunLabel& label, const graph::StepConfig& c);

// A field's value as a CSV cell: strings bare, booleans as 0/1, numbers as JSON writes them.
std::string csv_cell(const nlohmann::json& value);

}  // namespace tessera::sim::report
