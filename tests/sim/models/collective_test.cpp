// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/flow_routing.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::models {
namespace {

using graph::CollType;

const CollectiveAlgorithm& algorithm(std::string_view name) {
  const CollectiveAlgorithm* a = builtin_collectives().find(name);
  EXPECT_NE(a, nullptr) << name;
  return *a;
}

CollectiveCost collective_cost(CollType c, int n, int channels, double bytes) {
  return builtin_collectives().at(builtin_collectives().select(c)).cost(c, n, channels, bytes);
}

int ring_channels(const std::vector<std::int32_t>& ranks, const topology::Cluster& c) {
  return algorithm("ring").channels(ranks, c);
}

TEST(CollectiveRegistry, SelectsOneAlgorithmPerType) {
  const CollectiveRegistry& r = builtin_collectives();
  EXPECT_EQ(r.names(), (std::vector<std::string_view>{
                           "ring", "chain", "pairwise", "rail_ring", "nvls", "mesh", "one_shot",
                           "tree", "hierarchical", "rail_pairwise", "neighbour", "deepep"}));
  EXPECT_EQ(r.at(r.select(CollType::kAllReduce)).name(), "ring");
  EXPECT_EQ(r.at(r.select(CollType::kAllGather)).name(), "ring");
  EXPECT_EQ(r.at(r.select(CollType::kReduceScatter)).name(), "ring");
  EXPECT_EQ(r.at(r.select(CollType::kBroadcast)).name(), "chain");
  EXPECT_EQ(r.at(r.select(CollType::kAllToAll)).name(), "pairwise");
  EXPECT_EQ(r.at(r.select(CollType::kSendRecv)).name(), "neighbour");
  EXPECT_EQ(r.find("no-such-algorithm"), nullptr);
}

TEST(CollectiveCost, RingFamilyVolumesAndSteps) {
  CollectiveCost ar = collective_cost(CollType::kAllReduce, 4, 1, 8e6);
  EXPECT_EQ(ar.steps, 6);
  EXPECT_DOUBLE_EQ(ar.bytes_per_flow, 12e6);
  CollectiveCost ag = collective_cost(CollType::kAllGather, 4, 2, 8e6);
  EXPECT_EQ(ag.steps, 3);
  EXPECT_DOUBLE_EQ(ag.bytes_per_flow, 3e6);  // 3/4 * 8e6 over 2 channels
  CollectiveCost rs = collective_cost(CollType::kReduceScatter, 4, 1, 8e6);
  EXPECT_EQ(rs.steps, 3);
  CollectiveCost bc = collective_cost(CollType::kBroadcast, 5, 1, 1e6);
  EXPECT_EQ(bc.steps, 4);
  EXPECT_DOUBLE_EQ(bc.bytes_per_flow, 1e6);
  CollectiveCost a2a = collective_cost(CollType::kAllToAll, 4, 1, 8e6);
  EXPECT_EQ(a2a.steps, 1);
  EXPECT_DOUBLE_EQ(a2a.bytes_per_flow, 2e6);
  EXPECT_EQ(collective_cost(CollType::kAllReduce, 1, 1, 8e6).steps, 0);
}

TEST(RingCollective, SingleNodeGroupIsOneRingInGroupOrder) {
  hw::Profile p = simtest::test_profile();
  topology::Cluster c = simtest::make_cluster(p, 8);
  std::vector<std::int32_t> ranks{0, 3, 5};
  EXPECT_EQ(ring_channels(ranks, c), 1);
  std::vector<Flow> flows;
  algorithm("ring").append_flows(ranks, c, flows);
  ASSERT_EQ(flows.size(), 3U);
  EXPECT_EQ(flows[0].src, 0);
  EXPECT_EQ(flows[0].dst, 3);
  EXPECT_EQ(flows[2].src, 5);
  EXPECT_EQ(flows[2].dst, 0);
  flows.clear();
  algorithm("chain").append_flows(ranks, c, flows);
  EXPECT_EQ(flows.size(), 2U);
  flows.clear();
  algorithm("pairwise").append_flows(ranks, c, flows);
  EXPECT_EQ(flows.size(), 6U);
}

TEST(RingCollective, MultiNodeGroupsUseOneRotatedRingPerLocalMember) {
  hw::Profile p = simtest::test_profile();
  topology::Cluster c = simtest::make_cluster(p, 4, 2);  // nodes {0,1} and {2,3}
  std::vector<std::int32_t> ranks{0, 1, 2, 3};
  ASSERT_EQ(ring_channels(ranks, c), 2);
  std::vector<Flow> flows;
  algorithm("ring").append_flows(ranks, c, flows);
  ASSERT_EQ(flows.size(), 8U);
  std::vector<std::int32_t> inter_node_sources;
  for (const Flow& f : flows) {
    if (c.node_of(f.src) != c.node_of(f.dst)) {
      inter_node_sources.push_back(f.src);
    }
  }
  // Channel 0 leaves node 0 from rank 1 and node 1 from rank 3; channel 1 from 0 and 2.
  EXPECT_EQ(inter_node_sources, (std::vector<std::int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(ring_channels({0, 2}, c), 1);     // one member per node
  EXPECT_EQ(ring_channels({0, 1, 2}, c), 1);  // uneven
}

TEST(FlowRouter, CountsFlowsPerLinkAndSlowestLatency) {
  hw::Profile p = simtest::test_profile();
  p.scale_up.latency = 100'000;
  topology::Cluster c = simtest::make_cluster(p, 8);
  FlowRouter router(c);
  router.add(Flow{0, 1});
  router.add(Flow{0, 2});
  router.add(Flow{3, 3});  // to itself: nothing
  RoutedLoad load = router.take();
  EXPECT_EQ(load.max_latency, c.path_latency(0, 1));
  int total = 0;
  int on_uplink = 0;
  for (const LinkUse& u : load.uses) {
    total += u.mult;
    on_uplink = std::max(on_uplink, u.mult);
  }
  EXPECT_EQ(total, 4);      // two hops per flow through the NVSwitch
  EXPECT_EQ(on_uplink, 2);  // both leave over device 0's uplink
  EXPECT_TRUE(router.take().uses.empty());
}

}  // namespace
}  // namespace tessera::models
