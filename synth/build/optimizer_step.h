// SPDX-License-Identifier: Apache-2.0
// Internal to synth/: the optimizer step's kernels, as Megatron's mixed-precision optimizer
// runs them after the gradient reduction (docs/formulas.md, "Optimizer step"): the copy of
// fp16 main gradients to fp32 when they are not kept in fp32, with fp16 the loss-scale unscale and
// inf/nan check of the fp32 main gradients, the global gradient norm when gradients are clipped
// (training.clip_grad), the Adam update of the fp32 master weights (writing the fp16/bf16 copy),
// and the zeroing of the gradient buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "synth/scenario/scenario.h"

namespace tessera::synth::detail {

struct OptimizerNames {
  std::uint32_t copy_grads = 0;  // "optimizer.copy_grads"
  std::uint32_t unscale = 0;     // "optimizer.unscale_check_inf"
  std::uint32_t grad_norm = 0;   // "optimizer.grad_norm"
  std::uint32_t adam = 0;        // "optimizer.adam"
  std::uint32_t zero_grad = 0;   // "optimizer.zero_grad"
};

OptimizerNames intern_optimizer_names(graph::ExecGraph& g);

// Adds the step's kernels after `deps` for `params` parameters of which this rank updates
// `shard` (all of them, or its distributed-optimizer shard) and returns the Adam update,
// which the distributed optimizer's parameter all-gathers follow.
graph::NodeId add_optimizer_step(graph::RankGraph& g, const TrainingConfig& t,
                                 const OptimizerNames& names, double params, double shard,
                                 const std::vector<graph::NodeId>& deps);

}  // namespace tessera::synth::detail
