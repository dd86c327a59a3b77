// SPDX-License-Identifier: Apache-2.0
// What a scenario's typed parts compute about themselves: parameter counts and names.
#include "synth/scenario/scenario.h"

#include <string_view>

namespace tessera::synth {

hw::Profile hardware_profile(const Scenario& s) {
  return s.cluster.profile ? *s.cluster.profile
                           : hw::load_profile(s.cluster.hardware, s.cluster.hardware_at);
}

double ModelConfig::parameters() const {
  auto h = static_cast<double>(hidden);
  double qkv = h * static_cast<double>((heads + 2 * kv_heads) * head_dim());
  double ffn_in = h * static_cast<double>(ffn) * (activation == Activation::kSwiglu ? 2.0 : 1.0);
  double layer = qkv + h * h + ffn_in + static_cast<double>(ffn) * h + 2.0 * h;
  if (bias) {
    layer +=
        static_cast<double>((heads + 2 * kv_heads) * head_dim()) + h + ffn_in / h + h + 2.0 * h;
  }
  double embed = static_cast<double>(vocab) * h;
  return static_cast<double>(layers) * layer + embed * (tied_embeddings ? 1.0 : 2.0) + h;
}

std::string_view owner_mode_name(OwnerMode m) {
  switch (m) {
    case OwnerMode::kRoundRobin:
      return "round_robin";
    case OwnerMode::kMin:
      return "min";
    case OwnerMode::kGreedy:
      return "greedy";
  }
  return "?";
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

std::string_view fp8_recipe_name(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kNone:
      return "none";
    case Fp8Recipe::kDelayed:
      return "delayed";
    case Fp8Recipe::kTensorwise:
      return "tensorwise";
    case Fp8Recipe::kBlockwise:
      return "blockwise";
  }
  return "?";
}

}  // namespace tessera::synth
