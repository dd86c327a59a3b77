// SPDX-License-Identifier: Apache-2.0
// Scenario -> the per-rank execution graphs of one training step. Hardware-independent.
#pragma once

#include <optional>
#include <vector>

#include "graph/exec_graph.h"
#include "synth/models/transformer.h"
#include "synth/parallel/block_program.h"
#include "synth/scenario/scenario.h"
#include "synth/schedule/transpose.h"

namespace tessera::synth {

struct SynthOptions {
  // One graph per pipeline stage, shared by the stage's ranks (they differ only in which
  // groups and peers they talk to). Off: one graph per rank, for checking the sharing.
  bool share_rank_classes = true;
};

// The lowered blocks a step is made of (exposed for tests and reports).
struct StepPrograms {
  parallel::BlockProgram embed;
  parallel::BlockProgram layer;  // a dense decoder layer
  parallel::BlockProgram head;
  std::optional<parallel::BlockProgram> moe_layer;  // model.moe's layers
  std::optional<parallel::BlockProgram> mtp;        // multi-token prediction on its own stage
  std::vector<bool> is_moe;                         // per decoder layer
  // model.sliding_window's layers, dense and MoE, and which decoder layers they are.
  std::optional<parallel::BlockProgram> windowed_layer;
  std::optional<parallel::BlockProgram> windowed_moe_layer;
  std::vector<bool> is_windowed;

  // The program of decoder layer `l`.
  [[nodiscard]] const parallel::BlockProgram& of_layer(std::int64_t l) const {
    const auto i = static_cast<std::size_t>(l);
    if (is_windowed[i]) {
      return is_moe[i] ? *windowed_moe_layer : *windowed_layer;
    }
    return is_moe[i] ? *moe_layer : layer;
  }
  // The decoder layers' distinct programs.
  [[nodiscard]] std::vector<const parallel::BlockProgram*> layer_programs() const;
  // The sum over the decoder layers of a per-layer figure of their programs.
  [[nodiscard]] double sum_layers(double parallel::BlockProgram::*field) const;
};
StepPrograms build_programs(const Scenario& s);

graph::ExecGraph synthesize(const Scenario& s, const SynthOptions& options = {});

// The configuration a step records in graph::StepInfo::config (for reports).
graph::StepConfig step_config(const Scenario& s);

// The per-pipeline-rank plans of a transposed encoder (empty for other placements).
std::vector<std::vector<schedule::Step>> transpose_plan(const Scenario& s);

// Megatron's default data-parallel gradient bucket: max(40M, 1M x dp) parameters.
double grad_bucket_params(const Scenario& s);

}  // namespace tessera::synth
