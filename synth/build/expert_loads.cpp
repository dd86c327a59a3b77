// SPDX-License-Identifier: Apache-2.0
// Skewed MoE routing (docs/moe.md): per MoE layer and microbatch, the experts' popularity is a
// Zipf law over an order of the experts drawn from the seed; every source rank routes its
// T_r·k rows by it (capped per expert at the capacity), so the ranks of an EP group receive
// the rows of the experts they hold, and the most loaded one decides the layer's time.
#include "synth/build/expert_loads.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>

namespace tessera::synth::detail {

namespace {

// SplitMix64 (Steele, Lea and Flood 2014): one well-mixed 64-bit seed per (seed, layer, mb).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The experts' shares of one layer and microbatch: a loads file's line for the layer, or Zipf
// weights 1/j^s (j = 1..E) dealt to the experts in a seeded order (Fisher-Yates on
// std::mt19937_64, whose output the standard fixes).
std::vector<double> popularity(const Routing& r, std::int64_t experts, std::int64_t layer,
                               std::int64_t mb) {
  if (r.kind == RoutingKind::kFile) {  // the file's line for this MoE layer, cycled
    std::vector<double> w = r.weights[static_cast<std::size_t>(layer) % r.weights.size()];
    double sum = 0.0;
    for (double x : w) {
      sum += x;
    }
    for (double& x : w) {
      x /= sum;
    }
    return w;
  }
  std::vector<double> w(static_cast<std::size_t>(experts));
  double sum = 0.0;
  for (std::size_t j = 0; j < w.size(); ++j) {
    w[j] = std::pow(static_cast<double>(j + 1), -r.s);
    sum += w[j];
  }
  std::mt19937_64 rng(
      mix(mix(mix(r.seed) + static_cast<std::uint64_t>(layer)) + static_cast<std::uint64_t>(mb)));
  for (std::size_t j = w.size(); j-- > 1;) {
    std::swap(w[j], w[static_cast<std::size_t>(rng() % (j + 1))]);
  }
  for (double& x : w) {
    x /= sum;
  }
  return w;
}

struct LayerLoad {
  std::vector<double> expert;    // per EP coordinate: received rows / balanced rows
  std::vector<double> exchange;  // per EP coordinate: max(sent, received) / balanced
  double dropped = 0.0;          // token copies one source rank drops
};

// `layer`: the decoder layer (the Zipf order's seed); `moe_index`: its place among the MoE
// layers (a loads file's line).
LayerLoad layer_load(const Scenario& s, std::int64_t layer, std::int64_t moe_index,
                     std::int64_t mb) {
  const MoeConfig& m = s.model.moe;
  const std::int64_t ep = s.parallel.ep;
  const double routed =
      static_cast<double>(s.training.micro_batch * s.local_seq() / s.parallel.tp * m.top_k);
  const double cap = m.capacity_factor > 0.0
                         ? std::ceil(routed * m.capacity_factor / static_cast<double>(m.experts))
                         : std::numeric_limits<double>::infinity();
  const std::vector<double> p = popularity(
      m.routing, m.experts, m.routing.kind == RoutingKind::kFile ? moe_index : layer, mb);
  LayerLoad out;
  double sent = 0.0;
  std::vector<double> rows(p.size());
  for (std::size_t e = 0; e < p.size(); ++e) {
    rows[e] = std::min(routed * p[e], cap);
    sent += rows[e];
    out.dropped += routed * p[e] - rows[e];
  }
  const std::int64_t local = m.experts / ep;
  for (std::int64_t j = 0; j < ep; ++j) {
    double recv = 0.0;
    for (std::int64_t e = j * local; e < (j + 1) * local; ++e) {
      recv += static_cast<double>(ep) * rows[static_cast<std::size_t>(e)];
    }
    out.expert.push_back(recv / routed);
    out.exchange.push_back(std::max(sent, recv) / routed);
  }
  return out;
}

// The decoder layers whose expert work a class graph holds.
std::vector<std::int32_t> expert_layers(const graph::RankGraph& g) {
  std::set<std::int32_t> layers;
  for (const graph::Node& n : g.nodes) {
    if (n.load == graph::LoadScale::kExpert && n.layer >= 0) {
      layers.insert(n.layer);
    }
  }
  return {layers.begin(), layers.end()};
}

}  // namespace

graph::ExpertLoads expert_loads(const Scenario& s, const parallel::Mesh& mesh,
                                const graph::ExecGraph& g) {
  graph::ExpertLoads out;
  out.ranks = g.num_ranks;
  out.layers = static_cast<std::int32_t>(s.model.layers);
  out.microbatches = static_cast<std::int32_t>(s.microbatches());
  const auto per_rank =
      static_cast<std::size_t>(out.layers) * static_cast<std::size_t>(out.microbatches);
  std::vector<LayerLoad> table(per_rank);
  std::int64_t moe_index = 0;
  for (std::int32_t l = 0; l < out.layers; ++l) {
    if (!s.model.moe.is_moe_layer(l)) {
      continue;
    }
    for (std::int32_t mb = 0; mb < out.microbatches; ++mb) {
      table[static_cast<std::size_t>(l) * static_cast<std::size_t>(out.microbatches) +
            static_cast<std::size_t>(mb)] = layer_load(s, l, moe_index, mb);
    }
    ++moe_index;
  }
  out.expert.assign(per_rank * static_cast<std::size_t>(out.ranks), 1.0F);
  out.exchange = out.expert;
  std::vector<std::vector<std::int32_t>> layers_of_class;
  for (const graph::RankGraph& c : g.classes) {
    layers_of_class.push_back(expert_layers(c));
  }
  for (std::int32_t r = 0; r < out.ranks; ++r) {
    const auto j = static_cast<std::size_t>(r < mesh.size() ? mesh.coord(r)[Axis::kEP] : 0);
    double sum = 0.0;
    double max = 0.0;
    double dropped = 0.0;
    double n = 0.0;
    for (std::int32_t l :
         layers_of_class[static_cast<std::size_t>(g.class_of_rank[static_cast<std::size_t>(r)])]) {
      for (std::int32_t mb = 0; mb < out.microbatches; ++mb) {
        const std::size_t k =
            static_cast<std::size_t>(l) * static_cast<std::size_t>(out.microbatches) +
            static_cast<std::size_t>(mb);
        if (table[k].expert.empty()) {
          continue;
        }
        const std::size_t i = static_cast<std::size_t>(r) * per_rank + k;
        out.expert[i] = static_cast<float>(table[k].expert[j]);
        out.exchange[i] = static_cast<float>(table[k].exchange[j]);
        sum += table[k].expert[j];
        max = std::max(max, table[k].expert[j]);
        dropped += table[k].dropped;
        n += 1.0;
      }
    }
    out.mean_load.push_back(n > 0.0 ? sum / n : 1.0);
    out.max_load.push_back(n > 0.0 ? max : 1.0);
    out.dropped.push_back(dropped);
  }
  return out;
}

}  // namespace tessera::synth::detail
