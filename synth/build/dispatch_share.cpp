// SPDX-License-Identifier: Apache-2.0
// Node-deduplicated token dispatch (docs/moe.md "DeepEP"): DeepEP's and HybridEP's kernels
// (deepseek-ai/DeepEP README, "normal kernels"; Megatron-Core's flex dispatcher) send a token
// over the scale-out network once to each other scale-up domain that holds one of its
// experts, to the device there on the sender's rail, which forwards it over the domain's
// NVLink to the experts' devices; the combine sums within the domain and returns one row.
// What crosses between domains is so the token's row times the domains it reaches, not
// times its k routed copies.
#include "synth/build/dispatch_share.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace tessera::synth::detail {

namespace {

// 1 - C(E - m, k) / C(E, k): a uniform k-subset of E meets a set of m.
double uniform_hit(std::int64_t experts, std::int64_t k, std::int64_t m) {
  double miss = 1.0;
  for (std::int64_t i = 0; i < k; ++i) {
    const auto left = static_cast<double>(experts - m - i);
    if (left <= 0.0) {
      return 1.0;
    }
    miss *= left / static_cast<double>(experts - i);
  }
  return 1.0 - miss;
}

// C(n, r) as a double (r small against the ranges used here; exact up to 2^53).
double choose(std::int64_t n, std::int64_t r) {
  if (r < 0 || r > n) {
    return 0.0;
  }
  double c = 1.0;
  for (std::int64_t i = 0; i < r; ++i) {
    c = c * static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return c;
}

// Group-limited routing: the token's Gk groups a uniform Gk-subset of the G, its k experts a
// uniform k-subset of their U = Gk·E/G experts, so p = 1 - E[C(U - u, k) / C(U, k)] over u,
// the experts of the set in the chosen groups. u's distribution: ways[j][u] counts the
// choices of j among the groups holding some of the set (the others add nothing), and
// C(G - o, Gk - j) completes each with groups from the o-less rest.
double group_limited_hit(const MoeConfig& m, const std::vector<char>& in) {
  const std::int64_t g = m.router_groups;
  const std::int64_t gk = m.router_group_topk;
  const std::int64_t size = m.experts / g;
  std::vector<std::int64_t> counts;  // per group holding some of the set: how many
  for (std::int64_t i = 0; i < g; ++i) {
    const auto first = in.begin() + i * size;
    if (const auto c = std::count(first, first + size, char{1}); c > 0) {
      counts.push_back(c);
    }
  }
  const auto o = static_cast<std::int64_t>(counts.size());
  const std::int64_t most = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  std::vector<std::vector<double>> ways(static_cast<std::size_t>(o + 1),
                                        std::vector<double>(static_cast<std::size_t>(most + 1)));
  ways[0][0] = 1.0;
  for (std::int64_t c : counts) {
    for (std::size_t j = ways.size() - 1; j-- > 0;) {
      for (std::size_t u = 0; u + static_cast<std::size_t>(c) < ways[j].size(); ++u) {
        ways[j + 1][u + static_cast<std::size_t>(c)] += ways[j][u];
      }
    }
  }
  const std::int64_t pool = gk * size;
  double miss = 0.0;
  for (std::int64_t j = 0; j <= std::min(o, gk); ++j) {
    const double rest = choose(g - o, gk - j);
    for (std::int64_t u = 0; u <= most; ++u) {
      const double w = ways[static_cast<std::size_t>(j)][static_cast<std::size_t>(u)] * rest;
      if (w > 0.0) {
        miss += w * (1.0 - uniform_hit(pool, m.top_k, u));
      }
    }
  }
  return 1.0 - miss / choose(g, gk);
}

// Round robin: token t's experts are t·k ... t·k + k - 1 (mod E); the starts repeat every
// E / gcd(E, k) tokens, so the hit rate is the share of those starts whose block meets the set.
double round_robin_hit(std::int64_t experts, std::int64_t k, const std::vector<char>& in) {
  const std::int64_t period = experts / std::gcd(experts, k);
  std::int64_t hits = 0;
  for (std::int64_t t = 0; t < period; ++t) {
    for (std::int64_t j = 0; j < k; ++j) {
      if (in[static_cast<std::size_t>((t * k + j) % experts)] != 0) {
        ++hits;
        break;
      }
    }
  }
  return static_cast<double>(hits) / static_cast<double>(period);
}

}  // namespace

double domain_hit(const MoeConfig& m, const std::vector<char>& domain_experts) {
  if (m.routing.kind == RoutingKind::kRoundRobin) {
    return round_robin_hit(m.experts, m.top_k, domain_experts);
  }
  if (m.router_groups > 1 && m.router_group_topk < m.router_groups) {
    return group_limited_hit(m, domain_experts);
  }
  const auto held = std::count(domain_experts.begin(), domain_experts.end(), char{1});
  return uniform_hit(m.experts, m.top_k, held);
}

double dispatch_share(const MoeConfig& m, const std::vector<std::int32_t>& ranks, int domain_size) {
  std::set<std::int32_t> domains;
  for (std::int32_t r : ranks) {
    domains.insert(r / domain_size);
  }
  if (domains.size() < 2 || m.top_k < 1) {
    return 0.0;
  }
  const auto ep = static_cast<std::int64_t>(ranks.size());
  const std::int64_t per_member = m.experts / ep;
  double share = 0.0;
  for (std::int32_t d : domains) {
    std::vector<char> held(static_cast<std::size_t>(m.experts), 0);
    for (std::int64_t j = 0; j < ep; ++j) {
      if (ranks[static_cast<std::size_t>(j)] / domain_size == d) {
        std::fill_n(held.begin() + j * per_member, per_member, char{1});
      }
    }
    share = std::max(share, domain_hit(m, held) / static_cast<double>(m.top_k));
  }
  return share;
}

}  // namespace tessera::synth::detail
