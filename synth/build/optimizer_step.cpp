// SPDX-License-Identifier: Apache-2.0
#include "synth/build/optimizer_step.h"

namespace tessera::synth::detail {

namespace {

// One memory-bound fp32 pass over `bytes` (plus `flops`) after `deps`.
graph::NodeId pass(graph::RankGraph& g, std::uint32_t name, double bytes, double flops,
                   const std::vector<graph::NodeId>& deps) {
  graph::Node n;
  n.kind = graph::NodeKind::kCompute;
  n.op = graph::OpClass::kOptimizer;
  n.phase = graph::Phase::kOptimizer;
  n.dtype = base::DType::kFP32;
  n.bytes = bytes;
  n.flops = flops;
  n.name = name;
  return g.add(n, deps);
}

}  // namespace

OptimizerNames intern_optimizer_names(graph::ExecGraph& g) {
  return {.copy_grads = g.intern("optimizer.copy_grads"),
          .unscale = g.intern("optimizer.unscale_check_inf"),
          .grad_norm = g.intern("optimizer.grad_norm"),
          .adam = g.intern("optimizer.adam"),
          .zero_grad = g.intern("optimizer.zero_grad")};
}

graph::NodeId add_optimizer_step(graph::RankGraph& g, const TrainingConfig& t,
                                 const OptimizerNames& names, double params, double shard,
                                 const std::vector<graph::NodeId>& deps) {
  std::vector<graph::NodeId> before = deps;
  if (!t.fp32_grads()) {
    // fp16 main gradients are copied to the fp32 master parameters' gradients
    // (Megatron's _copy_model_grads_to_main_grads: main_grad.float(); read 2, write 4).
    before = {pass(g, names.copy_grads, 6.0 * shard, 0.0, before)};
  }
  if (t.precision == base::DType::kFP16) {
    // The dynamic loss scaler: unscale the fp32 main gradients in place and look for inf/nan
    // (read + write, 8 bytes a parameter; torch._amp_foreach_non_finite_check_and_unscale_).
    before = {pass(g, names.unscale, 8.0 * shard, shard, before)};
  }
  if (t.clip_grad > 0.0) {
    // The global L2 norm of the gradients (multi_tensor_l2norm: one fp32 read). The scaling
    // by max_norm / norm runs only when the norm exceeds clip_grad, which is not modelled.
    before = {pass(g, names.grad_norm, 4.0 * shard, 2.0 * shard, before)};
  }
  // Adam: read param, grad, master, m, v; write master, m, v, param.
  graph::NodeId adam = pass(g, names.adam, 32.0 * shard, 10.0 * shard, before);
  // The next step accumulates into a zeroed main-gradient buffer (all of this rank's
  // parameters, not only its shard): a memset, 4 bytes a parameter (2 for fp16 gradients).
  pass(g, names.zero_grad, t.grad_bytes() * params, 0.0, {adam});
  return adam;
}

}  // namespace tessera::synth::detail
