// SPDX-License-Identifier: Apache-2.0
// `model.moe`: the mixture-of-experts keys (docs/moe.md), and `model.mla`, DeepSeek's latent
// attention (docs/mla.md). Read onto the preset's values, so a
// preset's experts can be changed key by key.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include "synth/scenario/readers.h"

namespace tessera::synth::reader {

using base::YamlNode;

namespace {

constexpr std::int64_t kMaxExperts = std::int64_t{1} << 16;

constexpr std::array<std::string_view, 15> kMoeKeys = {"experts",
                                                       "top_k",
                                                       "expert_ffn",
                                                       "shared_experts",
                                                       "shared_expert_ffn",
                                                       "first_dense_layers",
                                                       "moe_every",
                                                       "capacity_factor",
                                                       "router",
                                                       "router_groups",
                                                       "router_group_topk",
                                                       "routing",
                                                       "dispatcher",
                                                       "shared_expert_overlap",
                                                       "grouped_gemm"};

// A loads file (docs/moe.md): per MoE layer, in order and cycled, one line of `experts`
// non-negative comma-separated weights, the relative rows each expert gets; `#` comments.
std::vector<std::vector<double>> read_expert_loads(const YamlNode& at, const std::string& file,
                                                   std::int64_t experts) {
  const DataFile data = read_data_file(at, file, "expert loads file");
  std::vector<std::vector<double>> out;
  for (const auto& [no, line] : data.lines) {
    if (out.size() >= std::size_t{1} << 16) {
      break;
    }
    std::vector<double> w;
    std::istringstream fields(line);
    std::string cell;
    double sum = 0.0;
    bool ok = true;
    while (ok && std::getline(fields, cell, ',')) {
      char* end = nullptr;
      const double x = std::strtod(cell.c_str(), &end);
      ok = end != cell.c_str() &&
           std::string_view(end).find_first_not_of(" \t\r") == std::string_view::npos;
      ok = ok && std::isfinite(x) && x >= 0.0;
      w.push_back(x);
      sum += ok ? x : 0.0;
    }
    if (!ok || static_cast<std::int64_t>(w.size()) != experts || !(sum > 0.0)) {
      throw base::InputError(
          base::SourceLoc{data.path, no, 1},
          fmt::format("expected {} non-negative comma-separated expert weights, not all zero "
                      "(one line per MoE layer), got '{}'",
                      experts, line));
    }
    out.push_back(std::move(w));
  }
  if (out.empty()) {
    at.fail(fmt::format("the expert loads file '{}' lists no layer", data.path));
  }
  return out;
}

// `routing: balanced` or `round_robin`, a seeded skew `{skew: zipf, s: 1.2, seed: 1}`, or `{file:
// loads.csv}`.
void read_routing(const YamlNode& n, Routing& r, std::int64_t experts) {
  if (auto v = n.find("routing")) {
    if (v->is_scalar()) {
      constexpr std::array<std::string_view, 2> kKinds = {"balanced", "round_robin"};
      r.kind =
          v->as_choice(kKinds) == "balanced" ? RoutingKind::kBalanced : RoutingKind::kRoundRobin;
    } else {
      if (v->is_map() && v->has("file")) {
        constexpr std::array<std::string_view, 1> kFileKeys = {"file"};
        v->check_keys(kFileKeys);
        r.kind = RoutingKind::kFile;
        r.file = v->at("file").as_string();
        r.weights = read_expert_loads(v->at("file"), r.file, experts);
        return;
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
  if (auto v = n.find("router_groups")) {
    m.router_groups = v->as_int(1, kMaxExperts);
    m.router_group_topk = m.router_groups;  // absent: every group (no limit)
  }
  if (auto v = n.find("router_group_topk")) {
    m.router_group_topk = v->as_int(1, kMaxExperts);
  }
  read_routing(n, m.routing, m.experts);
  if (auto v = n.find("dispatcher")) {
    // deepep and hybridep: Megatron-Core's flex dispatcher with either backend, one model.
    constexpr std::array<std::string_view, 4> kDispatchers = {"alltoall", "allgather", "deepep",
                                                              "hybridep"};
    const std::string d = v->as_choice(kDispatchers);
    m.dispatcher = d == "alltoall"    ? MoeDispatcher::kAllToAll
                   : d == "allgather" ? MoeDispatcher::kAllGather
                                      : MoeDispatcher::kDeepEP;
  }
  if (auto v = n.find("shared_expert_overlap")) {
    m.shared_expert_overlap = v->as_bool();
  }
  if (auto v = n.find("grouped_gemm")) {
    constexpr std::array<std::string_view, 2> kGroupedGemms = {"per_expert", "single"};
    m.grouped_gemm =
        v->as_choice(kGroupedGemms) == "single" ? GroupedGemm::kSingle : GroupedGemm::kPerExpert;
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
