// SPDX-License-Identifier: Apache-2.0
// A small mixture-of-experts scenario shared by the MoE tests.
#pragma once

#include <cstdint>

#include "synth/scenario/validate.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth::testing {

// A Mixtral-like decoder: SwiGLU, RMSNorm, GQA, no biases; 8 experts, top-2, one shared
// expert; micro_batch 2. b·s·k / (E·tp) is a whole number, so balanced routing is exact.
inline Scenario moe_scenario(std::int64_t tp, std::int64_t dp, std::int64_t ep = 1,
                             std::int64_t etp = 1) {
  Scenario s = gpt_scenario_unchecked(4, 512, 8, tp, 1, dp);
  s.model.activation = Activation::kSwiglu;
  s.model.norm = NormKind::kRmsNorm;
  s.model.bias = false;
  s.model.dropout = 0.0;
  s.model.kv_heads = 4;
  s.model.ffn = 1536;
  s.model.moe = {
      .experts = 8, .top_k = 2, .expert_ffn = 768, .shared_experts = 1, .shared_expert_ffn = 1024};
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  s.training.micro_batch = 2;
  s.training.global_batch = 4 * dp;
  s.parallel.sp = tp > 1;
  s.parallel.ep = ep;
  s.parallel.etp = etp;
  check_or_throw(s);
  return s;
}

}  // namespace tessera::synth::testing
