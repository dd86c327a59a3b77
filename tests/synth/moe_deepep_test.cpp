// SPDX-License-Identifier: Apache-2.0
// Node-deduplicated token dispatch (model.moe.dispatcher: deepep, docs/moe.md): the share of a
// member's all-to-all payload that crosses to each other scale-up domain, against its closed
// forms, and the EP groups a scenario gets with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "synth/build/dispatch_share.h"
#include "synth/build/synthesize.h"
#include "synth/scenario/scenario.h"

namespace tessera::synth {
namespace {

using detail::dispatch_share;

MoeConfig moe(std::int64_t experts, std::int64_t top_k, RoutingKind routing) {
  MoeConfig m;
  m.experts = experts;
  m.top_k = top_k;
  m.expert_ffn = 64;
  m.routing.kind = routing;
  return m;
}

// Uniform routing: a token reaches a domain holding m of the E experts with probability
// 1 - C(E-m, k)/C(E, k), and sends it one row of its k routed copies. E = 8, k = 2, two
// domains of 4 experts: 1 - 6/28 = 22/28, so 11/28 of the payload to the other domain.
TEST(DeepEpShare, UniformRoutingIsTheHypergeometricHitRate) {
  const std::vector<std::int32_t> two_domains = {0, 1, 8, 9};  // 2 members a node of 8
  EXPECT_NEAR(dispatch_share(moe(8, 2, RoutingKind::kBalanced), two_domains, 8), 11.0 / 28.0,
              1e-12);
  // Skewed routing is costed as uniform draws: the same share.
  EXPECT_NEAR(dispatch_share(moe(8, 2, RoutingKind::kZipf), two_domains, 8), 11.0 / 28.0, 1e-12);
  // k larger than what the other domains hold: every token reaches every domain.
  EXPECT_NEAR(dispatch_share(moe(8, 6, RoutingKind::kBalanced), two_domains, 8), 1.0 / 6.0, 1e-12);
}

// Group-limited routing: a uniform choice of Gk of the G groups, then k of their experts.
// E = 8 in G = 4 groups of 2, Gk = 2, k = 2; the other domain holds groups 0 and 1. Neither
// chosen (1 of 6 choices): missed. One (4 of 6): the pool of 4 holds 2 of the domain's,
// missed with C(2,2)/C(4,2) = 1/6. Both (1 of 6): hit. p = 1 - (1 + 4/6)/6 = 13/18.
// DeepSeek-V3 on 8 nodes with ep 64: each node one group of 32, chosen with 4/8, then hit
// with 1 - C(96, 8)/C(128, 8).
TEST(DeepEpShare, GroupLimitedRoutingReachesFewerDomains) {
  MoeConfig m = moe(8, 2, RoutingKind::kBalanced);
  m.router_groups = 4;
  m.router_group_topk = 2;
  EXPECT_NEAR(dispatch_share(m, {0, 1, 8, 9}, 8), 13.0 / 36.0, 1e-12);
  MoeConfig v3 = moe(256, 8, RoutingKind::kBalanced);
  v3.router_groups = 8;
  v3.router_group_topk = 4;
  std::vector<std::int32_t> ep64;
  for (std::int32_t r = 0; r < 64; ++r) {
    ep64.push_back(r);
  }
  double miss = 1.0;  // C(96, 8) / C(128, 8)
  for (int i = 0; i < 8; ++i) {
    miss *= (96.0 - i) / (128.0 - i);
  }
  EXPECT_NEAR(dispatch_share(v3, ep64, 8), 0.5 * (1.0 - miss) / 8.0, 1e-12);
  // Round robin ignores the groups (NeMo AutoModel's fake gate routes without them).
  v3.routing.kind = RoutingKind::kRoundRobin;
  EXPECT_NEAR(dispatch_share(v3, ep64, 8), 1.0 / 8.0 / 8.0, 1e-12);
}

// Round robin: token t takes experts t·k ... t·k+k-1 (mod E). E = 8, k = 2: the blocks
// {0,1}, {2,3}, {4,5}, {6,7}, two in each domain of 4: hit 1/2, share 1/4. k = 3: of the 8
// starts, 6 blocks meet {0..3}: hit 3/4, share 1/4.
TEST(DeepEpShare, RoundRobinCountsTheBlocksThatMeetADomain) {
  const std::vector<std::int32_t> two_domains = {0, 1, 8, 9};
  EXPECT_NEAR(dispatch_share(moe(8, 2, RoutingKind::kRoundRobin), two_domains, 8), 0.25, 1e-12);
  EXPECT_NEAR(dispatch_share(moe(8, 3, RoutingKind::kRoundRobin), two_domains, 8), 0.25, 1e-12);
}

TEST(DeepEpShare, AGroupInOneDomainSendsNothingAcross) {
  EXPECT_EQ(dispatch_share(moe(8, 2, RoutingKind::kBalanced), {0, 1, 2, 3}, 8), 0.0);
}

// A scenario's EP groups carry the share when they span nodes with the deepep dispatcher:
// Qwen3-30B-A3B (128 experts, top 8) with ep 16 over two 8-GPU nodes.
TEST(DeepEpShare, EpGroupsAcrossNodesCarryTheShare) {
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/scenarios/qwen3-30b-a3b-h100.yaml";
  const std::vector<std::string> across = {"parallelism.pp=1", "parallelism.dp=16",
                                           "parallelism.ep=16"};
  auto shares = [&](std::vector<std::string> sets) {
    const graph::ExecGraph g = synthesize(load_scenario(file, sets));
    std::vector<double> out;
    for (const graph::Group& grp : g.groups) {
      if (grp.kind == graph::GroupKind::kEP) {
        out.push_back(grp.domain_share);
      }
    }
    return out;
  };
  double miss = 1.0;  // C(64, 8) / C(128, 8)
  for (int i = 0; i < 8; ++i) {
    miss *= (64.0 - i) / (128.0 - i);
  }
  std::vector<std::string> deepep = across;
  deepep.emplace_back("model.moe.dispatcher=deepep");
  const std::vector<double> got = shares(deepep);
  ASSERT_FALSE(got.empty());
  for (double s : got) {
    EXPECT_NEAR(s, (1.0 - miss) / 8.0, 1e-12);
  }
  for (double s : shares(across)) {  // the alltoall dispatcher: plain all-to-alls
    EXPECT_EQ(s, 0.0);
  }
  for (double s : shares({"model.moe.dispatcher=hybridep"})) {  // ep 8 inside a node
    EXPECT_EQ(s, 0.0);
  }
}

}  // namespace
}  // namespace tessera::synth
