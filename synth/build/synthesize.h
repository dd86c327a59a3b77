// SPDX-License-Identifier: Apache-2.0
// Scenario -> the per-rank execution graphs of one training step. Hardware-independent.
#pragma once

#include <optional>
#include <utility>
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
  parallel::BlockProgram layer;  // a dense full-attention decoder layer
  parallel::BlockProgram head;
  std::optional<parallel::BlockProgram> mtp;  // multi-token prediction on its own stage
  // The decoder layers' other kinds (models::Blocks::kinds), lowered, and each decoder
  // layer's: 0 for `layer`, k for kinds[k - 1].
  std::vector<std::pair<models::LayerKind, parallel::BlockProgram>> kinds;
  std::vector<std::size_t> kind_of_layer;

  // The program of decoder layer `l`, and its kind.
  [[nodiscard]] const parallel::BlockProgram& of_layer(std::int64_t l) const {
    const std::size_t k = kind_of_layer[static_cast<std::size_t>(l)];
    return k == 0 ? layer : kinds[k - 1].second;
  }
  [[nodiscard]] models::LayerKind kind_of(std::int64_t l) const {
    const std::size_t k = kind_of_layer[static_cast<std::size_t>(l)];
    return k == 0 ? models::LayerKind{} : kinds[k - 1].first;
  }
  // The program of a kind of layer; null when no decoder layer is of that kind.
  [[nodiscard]] const parallel::BlockProgram* program_of(const models::LayerKind& kind) const;
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
