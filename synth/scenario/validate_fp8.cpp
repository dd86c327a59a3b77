// SPDX-License-Identifier: Apache-2.0
// FP8 training against the hardware (the part must have FP8 tensor cores, a peak.fp8) and
// the framework (Transformer Engine's layers).
#include <fmt/format.h>

#include "synth/scenario/validate_checks.h"

namespace tessera::synth::detail {

namespace {

void check_fp8_param_gather(const Scenario& s, Violations& out) {
  if (!s.training.fp8_param_gather) {
    return;
  }
  if (s.training.fp8 == Fp8Recipe::kNone) {
    out.push_back({"training.fp8_param_gather",
                   "fp8_param_gather keeps the linear layers' weights in FP8, which needs "
                   "precision: fp8",
                   "set precision: fp8, or remove fp8_param_gather"});
  } else if (s.zero_stage() == 0) {  // Megatron asserts the same (arguments.py)
    out.push_back({"training.fp8_param_gather",
                   "fp8_param_gather gathers the FP8 weights over the data-parallel ranks: it "
                   "needs the distributed optimizer or FSDP",
                   "set distributed_optimizer: true (or parallelism.zero >= 1), or remove "
                   "fp8_param_gather"});
  }
}

}  // namespace

void check_fp8(const Scenario& s, Violations& out) {
  check_fp8_param_gather(s, out);
  if (s.training.fp8 == Fp8Recipe::kNone) {
    return;
  }
  if (s.training.transformer_impl == TransformerImpl::kLocal) {
    out.push_back({"training.transformer_impl",
                   "precision: fp8 runs Transformer Engine's FP8 linear layers; Megatron's local "
                   "layers have no FP8",
                   "use transformer_impl: transformer_engine (the default), or precision: bf16"});
  }
  if (!s.cluster.profile) {
    return;
  }
  const hw::Profile& p = *s.cluster.profile;
  if (s.training.fp8 == Fp8Recipe::kMxfp8 && !p.mxfp8) {
    out.push_back({"training.fp8_recipe",
                   fmt::format("fp8_recipe: mxfp8 needs tensor cores that apply MX block scales "
                               "(Blackwell), and hardware '{}' has none (mxfp8 in its profile)",
                               p.name),
                   "use fp8_recipe: blockwise or tensorwise, or a Blackwell part (b200, gb200, "
                   "b300, gb300)"});
  }
  if (p.peak(base::DType::kFP8) <= 0.0) {
    out.push_back({"training.precision",
                   fmt::format("precision: fp8 needs FP8 tensor cores, but hardware '{}' has no "
                               "fp8 peak (peak.fp8 in its profile)",
                               p.name),
                   "use precision: bf16, or hardware with FP8 (h100-sxm, h200-sxm, h800-sxm, "
                   "b200, gb200)"});
  }
}

}  // namespace tessera::synth::detail
