// SPDX-License-Identifier: Apache-2.0
// HCCL's hierarchical collectives across 910B servers (sim/models/collective/hierarchical.cpp):
// the stages, where they apply, and closed forms of the simulated time, stage after stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "base/units.h"
#include "hwprofiles/hw_profile.h"
#include "sim/models/collective/algorithm.h"
#include "tests/sim/sim_test_util.h"
#include "topology/cluster.h"

namespace tessera::models {
namespace {

using graph::CollType;

const CollectiveAlgorithm& hierarchical() {
  return *builtin_collectives().find("hierarchical");
}

topology::Cluster ascend_servers(const hw::Profile& p, int devices) {
  return {topology::load_topology_preset("ascend-910b-cluster", {}), p, devices};
}

std::vector<std::int32_t> iota_ranks(int n) {
  std::vector<std::int32_t> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

TEST(Hierarchical, AllReduceIsServerReduceScatterRailAllReduceServerAllGather) {
  const hw::Profile p = hw::load_profile("ascend-910b");
  const topology::Cluster c = ascend_servers(p, 16);
  const auto stages = hierarchical().stages(CollType::kAllReduce, iota_ranks(16), c);
  ASSERT_EQ(stages.size(), 3U);
  const CollectiveRegistry& r = builtin_collectives();
  EXPECT_EQ(r.at(stages[0].algorithm).name(), "mesh");
  EXPECT_EQ(stages[0].type, CollType::kReduceScatter);
  EXPECT_EQ(stages[0].subgroups.size(), 2U);  // one per server, 8 members each
  EXPECT_EQ(stages[0].subgroups[1], (std::vector<std::int32_t>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(r.at(stages[1].algorithm).name(), "ring");
  EXPECT_EQ(stages[1].type, CollType::kAllReduce);
  EXPECT_EQ(stages[1].subgroups.size(), 8U);  // one per local index (rail)
  EXPECT_EQ(stages[1].subgroups[3], (std::vector<std::int32_t>{3, 11}));
  EXPECT_DOUBLE_EQ(stages[1].bytes_fraction, 1.0 / 8);
  EXPECT_EQ(stages[2].type, CollType::kAllGather);
  EXPECT_EQ(hierarchical().stages(CollType::kReduceScatter, iota_ranks(16), c).size(), 2U);
  EXPECT_EQ(hierarchical().stages(CollType::kAllGather, iota_ranks(16), c).front().type,
            CollType::kAllGather);
}

TEST(Hierarchical, AppliesAcrossMeshServersWithEqualMembersOnly) {
  const hw::Profile p = hw::load_profile("ascend-910b");
  const topology::Cluster c = ascend_servers(p, 32);
  EXPECT_TRUE(hierarchical().applies(iota_ranks(32), c, p));
  EXPECT_TRUE(hierarchical().applies({0, 1, 8, 9, 16, 17}, c, p));
  EXPECT_FALSE(hierarchical().applies(iota_ranks(8), c, p));    // one server: mesh alone
  EXPECT_FALSE(hierarchical().applies({0, 8, 16, 24}, c, p));   // one member per server
  EXPECT_FALSE(hierarchical().applies({0, 1, 2, 8, 9}, c, p));  // 3 + 2 members
  const hw::Profile h100 = hw::load_profile("h100-sxm");
  const topology::Cluster dgx = simtest::make_cluster(h100, 16);  // NVSwitch: no direct links
  EXPECT_FALSE(hierarchical().applies(iota_ranks(16), dgx, h100));
}

// The route from `a` to `b`: its bottleneck rate (bytes/s) and its total latency.
struct Hop {
  double rate = 0.0;
  base::SimTime latency = 0;
};

Hop hop(const topology::Cluster& c, int a, int b) {
  Hop h;
  h.rate = 1e300;
  for (topology::LinkId id : c.route(a, b)) {
    const topology::Link& l = c.link(id);
    h.rate = std::min(h.rate, l.bandwidth * l.efficiency);
    h.latency += l.latency;
  }
  return h;
}

// One collective of `bytes` over all 16 NPUs of two servers, simulated.
double simulated(CollType type, double bytes, const hw::Profile& p, const topology::Cluster& c) {
  graph::ExecGraph g;
  g.groups.push_back({});
  g.groups.back().ranks = iota_ranks(16);
  std::vector<graph::RankGraph> graphs(16);
  for (auto& rg : graphs) {
    rg.add(simtest::collective(g, "coll", 0, type, bytes));
  }
  simtest::set_per_rank(g, graphs);
  return simtest::run(g, c, p, false).step_time_s;
}

// Closed forms with S the payload, k = 8 members per server, m = 2 servers: the server stages
// move S/k per mesh link in one step; the rail stage is a ring of two over S/k (all-reduce:
// S/k per flow in 2 steps; the others S/2k in 1) whose last, local step moves 2 (3 for
// reduce-scatter) x S/2k of HBM. One launch for the call.
TEST(Hierarchical, SimulatedTimeIsTheSumOfItsStages) {
  const hw::Profile p = hw::load_profile("ascend-910b");
  const topology::Cluster c = ascend_servers(p, 16);
  const Hop mesh = hop(c, 0, 1);
  const Hop rail = hop(c, 0, 8);
  const double s = 256.0 * (1 << 20);
  const double share = s / 8;
  const double hbm = p.hbm_bandwidth * p.hbm_efficiency;
  const double step = base::to_seconds(p.collective_step);
  const double launch = base::to_seconds(p.collective_launch);
  const double in = step + base::to_seconds(mesh.latency);
  const double across = step + base::to_seconds(rail.latency);
  const double ar =
      launch + 2 * in + 2 * across + share / hbm + 2 * share / mesh.rate + share / rail.rate;
  const double rs =
      launch + in + across + 1.5 * share / hbm + share / mesh.rate + 0.5 * share / rail.rate;
  const double ag =
      launch + in + across + share / hbm + share / mesh.rate + 0.5 * share / rail.rate;
  EXPECT_NEAR(simulated(CollType::kAllReduce, s, p, c), ar, 1e-7 * ar);
  EXPECT_NEAR(simulated(CollType::kReduceScatter, s, p, c), rs, 1e-7 * rs);
  EXPECT_NEAR(simulated(CollType::kAllGather, s, p, c), ag, 1e-7 * ag);
}

}  // namespace
}  // namespace tessera::models
