// SPDX-License-Identifier: Apache-2.0
// The lowered block programs a step is built from (StepPrograms): embedding, decoder layers
// (the dense one and each other kind the model uses), head, multi-token prediction apart,
// with TP overlap applied; and the data-parallel bucket size.
#include <algorithm>
#include <optional>
#include <vector>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/parallel/tp_overlap.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth {

using parallel::BlockProgram;

StepPrograms build_programs(const Scenario& s) {
  models::Blocks b = models::build_blocks(s);
  // Megatron recomputes transformer layers only; embedding and head keep their activations.
  bool split = schedule::splits_backward(s.schedule.kind);
  StepPrograms p{parallel::lower(b.embed, Recompute::kNone, split),
                 parallel::lower(b.layer, s.training.recompute, split),
                 parallel::lower(b.head, Recompute::kNone, split),
                 std::nullopt,
                 {},
                 b.kind_of_layer};
  for (const auto& [kind, block] : b.kinds) {
    p.kinds.emplace_back(kind, parallel::lower(block, s.training.recompute, split));
  }
  if (b.mtp) {  // like the head it follows, not recomputed
    p.mtp.emplace(parallel::lower(*b.mtp, Recompute::kNone, split));
  }
  std::vector<BlockProgram*> layers = {&p.layer};
  for (auto& kind : p.kinds) {
    layers.push_back(&kind.second);
  }
  // TE's userbuffers overlap the transformer layers' linear layers (Megatron-Core's output
  // layer is a plain ColumnParallelLinear); they need sequence parallelism.
  for (BlockProgram* prog : layers) {
    if (s.parallel.overlaps_tp_comm()) {
      parallel::overlap_tp_comm(*prog, {.ag_chunks = s.parallel.tp, .rs_chunks = 4});
    }
  }
  if (!s.parallel.async_tp_allreduce) {
    layers.push_back(&p.embed);
    layers.push_back(&p.head);
    if (p.mtp) {
      layers.push_back(&*p.mtp);
    }
    for (BlockProgram* prog : layers) {
      parallel::serialize_backward_tp_comm(*prog);
    }
  }
  return p;
}

const BlockProgram* StepPrograms::program_of(const models::LayerKind& kind) const {
  if (kind == models::LayerKind{}) {
    return &layer;
  }
  for (const auto& [k, program] : kinds) {
    if (k == kind) {
      return &program;
    }
  }
  return nullptr;
}

std::vector<const BlockProgram*> StepPrograms::layer_programs() const {
  std::vector<const BlockProgram*> out = {&layer};
  for (const auto& kind : kinds) {
    out.push_back(&kind.second);
  }
  return out;
}

double StepPrograms::sum_layers(double BlockProgram::*field) const {
  double sum = 0.0;
  for (std::size_t l = 0; l < kind_of_layer.size(); ++l) {
    sum += of_layer(static_cast<std::int64_t>(l)).*field;
  }
  return sum;
}

double grad_bucket_params(const Scenario& s) {
  if (s.training.grad_bucket_bytes > 0.0) {
    return s.training.grad_bucket_bytes / s.training.grad_bytes();
  }
  return std::max(40e6, 1e6 * static_cast<double>(s.parallel.dp * s.parallel.cp));
}

}  // namespace tessera::synth
