// SPDX-License-Identifier: Apache-2.0
// Mixture-of-experts layers against the model and the parallelism (docs/moe.md).
#include <fmt/format.h>

#include "synth/scenario/validate_checks.h"

namespace tessera::synth::detail {

void check_moe(const Scenario& s, Violations& out) {
  const MoeConfig& m = s.model.moe;
  if (!m.on()) {
    return;
  }
  if (m.first_dense_layers >= s.model.layers) {
    out.push_back({"model.moe.first_dense_layers",
                   fmt::format("first_dense_layers={} leaves no MoE layer of model.layers={}",
                               m.first_dense_layers, s.model.layers),
                   "a dense model leaves out model.moe"});
  }
  if (m.top_k > m.experts) {
    out.push_back({"model.moe.top_k",
                   fmt::format("top_k={} is more than experts={}", m.top_k, m.experts),
                   "each token is routed to top_k distinct experts"});
  }
  if (s.parallel.tp > 1 && !s.parallel.sp) {
    out.push_back({"parallelism.sp",
                   fmt::format("MoE layers with tp={} need sequence parallelism (Megatron-Core "
                               "requires it for MoE with tensor parallelism)",
                               s.parallel.tp),
                   "set parallelism.sp: true", "parallelism.tp"});
  }
  // The experts' MLPs are sharded over tensor parallelism like the dense one.
  check_divides(out, "parallelism.tp", s.parallel.tp, "tp", m.expert_ffn, "model.moe.expert_ffn");
  if (m.shared_experts > 0) {
    check_divides(out, "parallelism.tp", s.parallel.tp, "tp", m.shared_ffn(),
                  "model.moe.shared_experts x shared_expert_ffn");
  }
}

}  // namespace tessera::synth::detail
