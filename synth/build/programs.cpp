// SPDX-License-Identifier: Apache-2.0
// The lowered block programs a step is built from (StepPrograms): embedding, decoder layers
// (dense and MoE), head, multi-token prediction apart, with TP overlap applied; and the data-
// parallel bucket size.
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
                 std::nullopt,
                 {},
                 std::nullopt,
                 std::nullopt,
                 {}};
  for (std::int64_t l = 0; l < s.model.layers; ++l) {
    p.is_moe.push_back(s.model.moe.is_moe_layer(l));
    p.is_windowed.push_back(s.model.window_of_layer(l) > 0);
  }
  auto lower_layer = [&](const std::optional<models::Block>& block,
                         std::optional<BlockProgram>& prog) {
    if (block) {
      prog.emplace(parallel::lower(*block, s.training.recompute, split));
    }
  };
  lower_layer(b.moe_layer, p.moe_layer);
  lower_layer(b.windowed_layer, p.windowed_layer);
  lower_layer(b.windowed_moe_layer, p.windowed_moe_layer);
  if (b.mtp) {  // like the head it follows, not recomputed
    p.mtp.emplace(parallel::lower(*b.mtp, Recompute::kNone, split));
  }
  std::vector<BlockProgram*> layers = {&p.layer};
  for (std::optional<BlockProgram>* prog :
       {&p.moe_layer, &p.windowed_layer, &p.windowed_moe_layer}) {
    if (*prog) {
      layers.push_back(&**prog);
    }
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

std::vector<const BlockProgram*> StepPrograms::layer_programs() const {
  std::vector<const BlockProgram*> out = {&layer};
  for (const std::optional<BlockProgram>* prog :
       {&moe_layer, &windowed_layer, &windowed_moe_layer}) {
    if (*prog) {
      out.push_back(&**prog);
    }
  }
  return out;
}

double StepPrograms::sum_layers(double BlockProgram::*field) const {
  double sum = 0.0;
  for (std::size_t l = 0; l < is_moe.size(); ++l) {
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
