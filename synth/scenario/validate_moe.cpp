// SPDX-License-Identifier: Apache-2.0
// Mixture-of-experts layers against the model and the parallelism (docs/moe.md).
#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "synth/scenario/validate_checks.h"

namespace tessera::synth::detail {

namespace {

// Expert parallelism against the experts and the devices of a pipeline stage.
void check_expert_parallelism(const Scenario& s, Violations& out) {
  const ParallelConfig& p = s.parallel;
  const MoeConfig& m = s.model.moe;
  check_divides(out, "parallelism.ep", p.ep, "ep", m.experts, "model.moe.experts");
  if ((p.tp * p.dp) % (p.ep * p.etp) != 0) {
    out.push_back(
        {p.ep > 1 ? "parallelism.ep" : "parallelism.etp",
         fmt::format("ep x etp = {} x {} = {} does not divide the {} devices of a pipeline "
                     "stage (tp x dp = {} x {}): the experts fold a stage's devices into "
                     "etp x ep x edp",
                     p.ep, p.etp, p.ep * p.etp, p.tp * p.dp, p.tp, p.dp),
         "choose ep and etp whose product divides tp x dp"});
  }
  // Each expert's MLP is sharded over etp; the shared experts over tp, like the dense MLP.
  check_divides(out, "parallelism.etp", p.etp, "etp", m.expert_ffn, "model.moe.expert_ffn");
}

}  // namespace

void check_moe(const Scenario& s, Violations& out) {
  const MoeConfig& m = s.model.moe;
  if (!m.on()) {
    for (auto [key, size] : {std::pair{"parallelism.ep", s.parallel.ep},
                             std::pair{"parallelism.etp", s.parallel.etp}}) {
      if (size > 1) {
        out.push_back({key,
                       fmt::format("{}={} needs a model with experts (model.moe)",
                                   std::string_view(key).substr(12), size),
                       "leave it out, or give the model a model.moe section"});
      }
    }
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
  check_expert_parallelism(s, out);
  if (m.shared_experts > 0) {
    check_divides(out, "parallelism.tp", s.parallel.tp, "tp", m.shared_ffn(),
                  "model.moe.shared_experts x shared_expert_ffn");
  }
}

}  // namespace tessera::synth::detail
