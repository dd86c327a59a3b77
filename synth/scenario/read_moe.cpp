// SPDX-License-Identifier: Apache-2.0
// `model.moe`: the mixture-of-experts keys (docs/moe.md), and `model.mla`, DeepSeek's latent
// attention (docs/mla.md). Read onto the preset's values, so a
// preset's experts can be changed key by key.
#include <fmt/format.h>

#include <array>

#include "synth/scenario/readers.h"

namespace tessera::synth::reader {

using base::YamlNode;

namespace {

constexpr std::int64_t kMaxExperts = std::int64_t{1} << 16;

constexpr std::array<std::string_view, 12> kMoeKeys = {"experts",
                                                       "top_k",
                                                       "expert_ffn",
                                                       "shared_experts",
                                                       "shared_expert_ffn",
                                                       "first_dense_layers",
                                                       "moe_every",
                                                       "capacity_factor",
                                                       "router",
                                                       "routing",
                                                       "dispatcher",
                                                       "shared_expert_overlap"};

[[noreturn]] void not_modelled(const YamlNode& v, const std::string& what,
                               const std::string& hint) {
  throw base::InputError(v.loc(), what + " is not modelled yet", hint);
}

// `routing: balanced`, or a seeded skew `{skew: zipf, s: 1.2, seed: 1}`; and the dispatcher
// (only the all-to-all one is modelled so far).
void read_routing(const YamlNode& n, Routing& r) {
  if (auto v = n.find("routing")) {
    if (v->is_scalar()) {
      constexpr std::array<std::string_view, 1> kKinds = {"balanced"};
      (void)v->as_choice(kKinds);
      r.kind = RoutingKind::kBalanced;
    } else {
      if (v->is_map() && v->has("file")) {
        not_modelled(v->at("file"), "`model.moe.routing.file` (per-expert loads from a file)",
                     "routing: {skew: zipf, s: 1.2, seed: 1} draws skewed loads");
      }
      v->expect_map();
      constexpr std::array<std::string_view, 3> kKeys = {"skew", "s", "seed"};
      v->check_keys(kKeys);
      constexpr std::array<std::string_view, 1> kSkews = {"zipf"};
      (void)v->at("skew").as_choice(kSkews);
      r.kind = RoutingKind::kZipf;
      if (auto e = v->find("s")) {
        r.s = e->as_double();
        if (!(r.s >= 0.0) || r.s > 16.0) {
          e->fail(fmt::format("expected a Zipf exponent in [0, 16], got {}", e->as_string()),
                  "0 is uniform over the experts; 1.2 a strong skew");
        }
      }
      if (auto e = v->find("seed")) {
        r.seed = static_cast<std::uint64_t>(e->as_int(0, std::int64_t{1} << 62));
      }
    }
  }
  if (auto v = n.find("dispatcher")) {
    constexpr std::array<std::string_view, 2> kDispatchers = {"alltoall", "allgather"};
    if (v->as_choice(kDispatchers) == "allgather") {
      not_modelled(*v, "`model.moe.dispatcher: allgather`", "dispatcher: alltoall is modelled");
    }
  }
}

// `key`'s value, or the preset's (`current`) when absent; `preset_kind` names the presets that
// set it ("experts").
std::int64_t required(const YamlNode& n, std::string_view key, std::int64_t current,
                      std::int64_t lo, std::int64_t hi, std::string_view preset_kind) {
  if (auto v = n.find(key)) {
    return v->as_int(lo, hi);
  }
  if (current == 0) {
    n.fail(fmt::format("missing required key '{}' (or give a model 'preset' with {})", key,
                       preset_kind));
  }
  return current;
}

}  // namespace

void read_moe(const YamlNode& n, MoeConfig& m, std::int64_t layers) {
  n.expect_map();
  n.check_keys(kMoeKeys);
  m.experts = required(n, "experts", m.experts, 1, kMaxExperts, "experts");
  m.top_k = required(n, "top_k", m.top_k, 1, kMaxExperts, "experts");
  m.expert_ffn = required(n, "expert_ffn", m.expert_ffn, 1, kMaxWidth, "experts");
  if (auto v = n.find("shared_experts")) {
    m.shared_experts = v->as_int(0, kMaxExperts);
  }
  if (auto v = n.find("shared_expert_ffn")) {
    m.shared_expert_ffn = v->as_int(1, kMaxWidth);
  } else if (m.shared_expert_ffn == 0) {
    m.shared_expert_ffn = m.expert_ffn;
  }
  if (auto v = n.find("first_dense_layers")) {
    m.first_dense_layers = v->as_int(0, layers);
  }
  if (auto v = n.find("moe_every")) {
    m.moe_every = v->as_int(1, kMaxLayers);
  }
  if (auto v = n.find("capacity_factor")) {
    m.capacity_factor = v->as_double();
    if (!(m.capacity_factor > 0.0) || m.capacity_factor > 1e6) {
      v->fail(fmt::format("expected a capacity factor > 0, got {}", v->as_string()),
              "leave capacity_factor out for dropless routing");
    }
  }
  if (auto v = n.find("router")) {
    constexpr std::array<std::string_view, 2> kScores = {"softmax", "sigmoid"};
    m.router = v->as_choice(kScores) == "softmax" ? RouterScore::kSoftmax : RouterScore::kSigmoid;
  }
  read_routing(n, m.routing);
  if (auto v = n.find("shared_expert_overlap")) {
    m.shared_expert_overlap = v->as_bool();
  }
}

// `model.mla` (docs/mla.md): every dimension required but q_lora_rank (absent: 0, a plain
// query projection, as DeepSeek-V2-Lite).
void read_mla(const base::YamlNode& n, MlaConfig& m) {
  constexpr std::array<std::string_view, 5> kMlaKeys = {
      "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
  n.expect_map();
  n.check_keys(kMlaKeys);
  if (auto v = n.find("q_lora_rank")) {
    m.q_lora_rank = v->as_int(0, kMaxWidth);
  }
  m.kv_lora_rank = required(n, "kv_lora_rank", m.kv_lora_rank, 1, kMaxWidth, "latent attention");
  m.qk_nope_head_dim =
      required(n, "qk_nope_head_dim", m.qk_nope_head_dim, 1, kMaxWidth, "latent attention");
  m.qk_rope_head_dim =
      required(n, "qk_rope_head_dim", m.qk_rope_head_dim, 1, kMaxWidth, "latent attention");
  m.v_head_dim = required(n, "v_head_dim", m.v_head_dim, 1, kMaxWidth, "latent attention");
}

}  // namespace tessera::synth::reader
