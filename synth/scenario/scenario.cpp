// SPDX-License-Identifier: Apache-2.0
// What a scenario's typed parts compute about themselves: parameter counts and names.
#include "synth/scenario/scenario.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::synth {

hw::Profile hardware_profile(const Scenario& s) {
  hw::Profile p = s.cluster.profile ? *s.cluster.profile
                                    : hw::load_profile(s.cluster.hardware, s.cluster.hardware_at);
  if (s.cluster.power_limit > 0.0) {
    p.power.limit = s.cluster.power_limit;
  }
  return p;
}

double ModelConfig::parameters() const {
  auto h = static_cast<double>(hidden);
  const double gate = activation == Activation::kSwiglu ? 2.0 : 1.0;
  // An MLP of width f: fc1 (gate and up with SwiGLU) and fc2; a dense one has biases, the
  // experts have none (docs/moe.md).
  auto mlp = [&](double f) { return (gate + 1.0) * h * f; };
  auto dense_mlp = [&](double f) { return mlp(f) + (bias ? gate * f + h : 0.0); };
  double q = static_cast<double>((heads + 2 * kv_heads) * head_dim());
  const auto heads_width = static_cast<double>(heads * head_dim());
  double attention = h * q + heads_width * h + 2.0 * h + (bias ? q + h + 2.0 * h : 0.0);
  if (mla.on()) {  // formulas_moe_cp_zero.md §2 (Megatron's theoretical_memory_usage)
    const auto n = static_cast<double>(heads);
    const auto qc = static_cast<double>(mla.q_lora_rank);
    const auto kc = static_cast<double>(mla.kv_lora_rank);
    const auto qk = static_cast<double>(mla.qk_head_dim());
    const auto rope = static_cast<double>(mla.qk_rope_head_dim);
    const auto nope = static_cast<double>(mla.qk_nope_head_dim);
    const auto v = static_cast<double>(mla.v_head_dim);
    const double queries = qc > 0.0 ? qc * (h + n * qk) + qc : h * n * qk;
    attention = queries + h * (kc + rope) + kc * n * (nope + v) + kc + n * v * h + 2.0 * h;
  }
  double dense = attention + dense_mlp(static_cast<double>(ffn));
  double sparse = attention + h * static_cast<double>(moe.experts) +
                  static_cast<double>(moe.experts) * mlp(static_cast<double>(moe.expert_ffn)) +
                  (moe.shared_experts > 0 ? mlp(static_cast<double>(moe.shared_ffn())) : 0.0);
  double all_layers = 0.0;
  for (std::int64_t l = 0; l < layers; ++l) {
    all_layers += moe.is_moe_layer(l) ? sparse : dense;
  }
  // Each multi-token prediction module: two norms and the 2h -> h projection, a decoder layer
  // (MoE in an MoE model) and its final norm; it shares the embedding and the output layer.
  all_layers +=
      static_cast<double>(mtp_depth) * (2.0 * h + 2.0 * h * h + (moe.on() ? sparse : dense) + h);
  double embed = static_cast<double>(vocab) * h;
  return all_layers + embed * (tied_embeddings ? 1.0 : 2.0) + h;
}

std::span<const std::string_view> mesh_orders() {
  static const std::vector<std::string> kOrders = [] {
    std::vector<std::string> out;
    for (std::vector<std::string> axes : {std::vector<std::string>{"dp", "pp", "tp"},
                                          std::vector<std::string>{"cp", "dp", "pp", "tp"}}) {
      do {
        std::string o;
        for (const std::string& a : axes) {
          o += (o.empty() ? "" : "-") + a;
        }
        out.push_back(o);
      } while (std::next_permutation(axes.begin(), axes.end()));
    }
    return out;
  }();
  static const std::vector<std::string_view> kViews(kOrders.begin(), kOrders.end());
  return kViews;
}

std::vector<Axis> mesh_order(std::string_view text) {
  const bool cp_given = text.find("cp") != std::string::npos;
  std::vector<Axis> out;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    const std::string_view a = text.substr(i, 2);
    out.push_back(a == "tp"   ? Axis::kTP
                  : a == "cp" ? Axis::kCP
                  : a == "dp" ? Axis::kDP
                              : Axis::kPP);
    if (a == "tp" && !cp_given) {
      out.push_back(Axis::kCP);
    }
  }
  return out;
}

std::string mesh_order_name(const std::vector<Axis>& order) {
  std::string out;
  for (Axis a : order) {
    const std::string_view n = a == Axis::kTP   ? "tp"
                               : a == Axis::kCP ? "cp"
                               : a == Axis::kDP ? "dp"
                                                : "pp";
    out += (out.empty() ? "" : "-") + std::string(n);
  }
  return out;
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
  return kRecomputeNames.at(static_cast<std::size_t>(r));
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
    case Fp8Recipe::kMxfp8:
      return "mxfp8";
  }
  return "?";
}

}  // namespace tessera::synth
