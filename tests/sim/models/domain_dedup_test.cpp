// SPDX-License-Identifier: Apache-2.0
// The node-deduplicated dispatch (DeepEP's kernels, domain_dedup.cpp): a group with a domain
// share runs its all-to-alls as one transfer per member and other node, on the member's own
// rail, carrying the share of its payload; the tuner never picks it for other groups.
#include <gtest/gtest.h>

#include <algorithm>

#include "hwprofiles/hw_profile.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/tuner.h"
#include "sim/simulation.h"
#include "tests/sim/sim_test_util.h"
#include "topology/cluster.h"

namespace tessera::models {
namespace {

using graph::CollType;

const CollectiveAlgorithm& deepep() {
  return builtin_collectives().at(builtin_collectives().index_of("deepep"));
}

// Ranks 8-23: two nodes of 8.
std::vector<std::int32_t> two_nodes() {
  std::vector<std::int32_t> ranks;
  for (std::int32_t r = 8; r < 24; ++r) {
    ranks.push_back(r);
  }
  return ranks;
}

TEST(DeepEpDispatch, EachMemberSendsOnceToItsRailMateInTheOtherNode) {
  const hw::Profile p = simtest::test_profile();
  const topology::Cluster c = simtest::make_cluster(p, 32);
  std::vector<Flow> flows;
  deepep().append_flows(two_nodes(), c, flows);
  ASSERT_EQ(flows.size(), 16U);
  for (const Flow& f : flows) {
    EXPECT_NE(c.node_of(f.src), c.node_of(f.dst));
    EXPECT_EQ(f.src % 8, f.dst % 8);
  }
  // Three members in one node, one in the other: each of the three sends to the lone one,
  // which sends once to the node of the three, to its rail-mate there (rank 1).
  flows.clear();
  deepep().append_flows({0, 1, 2, 9}, c, flows);
  ASSERT_EQ(flows.size(), 4U);
  EXPECT_EQ(std::count_if(flows.begin(), flows.end(), [](const Flow& f) { return f.dst == 9; }), 3);
  EXPECT_EQ(std::count_if(flows.begin(), flows.end(),
                          [](const Flow& f) { return f.src == 9 && f.dst == 1; }),
            1);
  // Never the tuner's choice: only a group's domain share selects it.
  for (std::size_t a : tuner_candidates(CollType::kAllToAll, two_nodes(), c, p, TunerOptions{})) {
    EXPECT_NE(builtin_collectives().at(a).name(), "deepep");
  }
}

// One all-to-all of `bytes` per member over ranks 8-23, the group's domain share `share`.
double all_to_all_time(const hw::Profile& p, const topology::Cluster& c, double bytes,
                       double share) {
  graph::ExecGraph g;
  g.groups.push_back({graph::GroupKind::kEP, two_nodes(), share});
  std::vector<graph::RankGraph> graphs(32);
  for (std::int32_t r : g.groups.back().ranks) {
    graphs[static_cast<std::size_t>(r)].add(
        simtest::collective(g, "a2a", 0, CollType::kAllToAll, bytes, graph::Stream::kEP));
  }
  simtest::set_per_rank(g, graphs);
  return sim::simulate(g, c, p, sim::SimOptions{}).step_time_s;
}

// The test profile has no latencies: the wire time is all. Plain, each NIC carries its
// node-mates' 8 transfers of S/16 to its rail-mate (rail-aligned): S/2 at 50 GB/s. With the
// share, each member sends S·share to its rail-mate alone.
TEST(DeepEpDispatch, TheShareOfThePayloadCrossesAtTheNicRate) {
  const hw::Profile p = simtest::test_profile();
  const topology::Cluster c = simtest::make_cluster(p, 32);
  const double bytes = 1e9;
  EXPECT_NEAR(all_to_all_time(p, c, bytes, 0.0), bytes / 2 / 50e9, 1e-9);
  EXPECT_NEAR(all_to_all_time(p, c, bytes, 0.125), bytes * 0.125 / 50e9, 1e-9);
}

}  // namespace
}  // namespace tessera::models
