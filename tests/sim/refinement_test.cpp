// SPDX-License-Identifier: Apache-2.0
// Rank classes whose ranks see different networks (a pipeline stage straddling a leaf
// switch) are split into subclasses, one instance each, and still give exactly what
// simulating every rank gives; a split that fails re-verification falls back to every rank.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "sim/exec/sharing/group_classes.h"
#include "sim/exec/sharing/route_symmetry.h"
#include "sim/exec/sharing/sharing_plan.h"
#include "sim/simulation.h"
#include "tests/integration/integration_fixtures.h"
#include "tests/sim/sharing_fixtures.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::sim {
namespace {

using base::SimTime;
using graph::CollType;
using graph::ExecGraph;
using graph::GroupKind;
using graph::RankGraph;
using graph::Stream;
using namespace simtest;  // NOLINT(google-build-using-namespace)

constexpr SimTime kUs = 1'000'000;

// One spine: with several, equal-cost routing spreads flows over them by a hash of their
// ends, so ranks whose routes cross the same kinds of links can still differ in whether
// another rank's flow shares their spine link, which rank signatures (link kinds, not
// concrete links) do not see; results would then be close to, not equal to, every rank's.
struct Fabric {
  int devices_per_node = 2;
  int nodes_per_leaf = 4;
  bool rail_optimized = true;
  int spines = 1;
  double oversubscription = 1.0;
};

topology::Cluster fat_tree(const hw::Profile& p, int devices, const Fabric& f) {
  topology::TopologySpec spec;
  spec.kind = "nvswitch_fat_tree";
  spec.devices_per_node = f.devices_per_node;
  spec.nodes_per_leaf = f.nodes_per_leaf;
  spec.rail_optimized = f.rail_optimized;
  spec.spines = f.spines;
  spec.oversubscription = f.oversubscription;
  return topology::Cluster(spec, p, devices);
}

// p stages x dp replicas laid out stage-major (rank = d + dp * s, as the synthesizer does):
// groups 0..dp-1 are the replicas' pipelines, dp..dp+p-1 the stages' data-parallel groups.
std::vector<graph::Group> stage_major_groups(int p, int dp) {
  std::vector<graph::Group> groups;
  for (int d = 0; d < dp; ++d) {
    graph::Group pp{GroupKind::kPP, {}};
    for (int s = 0; s < p; ++s) {
      pp.ranks.push_back(d + dp * s);
    }
    groups.push_back(pp);
  }
  for (int s = 0; s < p; ++s) {
    graph::Group dpg{GroupKind::kDP, {}};
    for (int d = 0; d < dp; ++d) {
      dpg.ranks.push_back(d + dp * s);
    }
    groups.push_back(dpg);
  }
  return groups;
}

// Forward sends downstream, backward sends upstream, then the stage's DP all-reduce.
MakeGraph stage_major_graph(int p, int dp) {
  return [p, dp](ExecGraph& g, int rank) {
    const int s = rank / dp;
    RankGraph rg;
    rg.stage = s;
    std::vector<graph::NodeId> deps;
    if (s > 0) {
      deps.push_back(rg.add(recv(g, "recv_act", rank - dp, 0, 8e6)));
    }
    auto f = rg.add(compute(g, "fwd", 10 * kUs), deps);
    if (s + 1 < p) {
      rg.add(send(g, "send_act", rank + dp, 0, 8e6), {f});
      deps = {rg.add(recv(g, "recv_grad", rank + dp, 1, 8e6))};
    } else {
      deps = {f};
    }
    auto b = rg.add(compute(g, "bwd", 20 * kUs), deps);
    if (s > 0) {
      rg.add(send(g, "send_grad", rank - dp, 1, 8e6), {b});
    }
    rg.add(collective(g, "dp_ar", dp + s, CollType::kAllReduce, 16e6, Stream::kDP), {b});
    return rg;
  };
}

ExecGraph stage_classes(int p, int dp) {
  std::vector<std::int32_t> cls;
  std::vector<std::int32_t> reps;
  for (int r = 0; r < p * dp; ++r) {
    cls.push_back(r / dp);
  }
  for (int s = 0; s < p; ++s) {
    reps.push_back(s * dp);
  }
  return shared(stage_major_groups(p, dp), cls, reps, stage_major_graph(p, dp));
}

SimTime duration(const RunStats& stats, const ExecGraph& g, const std::string& name) {
  const Span span = span_of(stats, g, 0, name);
  return span.end - span.start;
}

bool asymmetric(const ExecGraph& g, const topology::Cluster& c) {
  return !exec::find_asymmetry(g, c, exec::classify_groups(g)).empty();
}

// 3 stages x 6 replicas, 2 devices per node: each stage spans 3 nodes and leaves hold 4
// nodes, so replicas 0-1 send from stage 0 to 1 inside a leaf, replicas 2-5 across a spine.
TEST(Refinement, SplitsStagesThatStraddleLeavesAndMatchesEveryRank) {
  hw::Profile p = test_profile();
  p.scale_out.latency = 1'000'000;
  const topology::Cluster c = fat_tree(p, 18, Fabric{});
  const ExecGraph g = stage_classes(3, 6);
  ASSERT_TRUE(asymmetric(g, c));  // sharing by stage used to fall back to every rank
  RunStats full = run(per_rank(stage_major_groups(3, 6), 18, stage_major_graph(3, 6)), c, p);
  RunStats split = run(g, c, p);
  EXPECT_EQ(split.sharing_fallback, "");
  EXPECT_EQ(split.simulated_ranks, 9);  // each stage: replicas {0, 1}, {2, 3}, {4, 5}
  expect_same(full, split);
  // The spine costs latency: with the data-parallel rings hopping across rails (no PXN
  // proxy on rank 0's NIC to slow its sends), replica 0's sends beat replica 2's.
  sim::SimOptions cross_rail;
  cross_rail.effects.disable("rail-alignment");
  const RunStats plain = sim::simulate(
      per_rank(stage_major_groups(3, 6), 18, stage_major_graph(3, 6)), c, p, cross_rail);
  const auto pp = static_cast<std::size_t>(GroupKind::kPP);
  EXPECT_LT(plain.ranks[0].comm_s[pp], plain.ranks[2].comm_s[pp]);
}

// Each instance is its subclass's lowest rank, in its rank's stage; collectives wait for as
// many instances as their group's members fall into.
TEST(Refinement, SubclassesAreRepresentedByTheirLowestRank) {
  hw::Profile p = test_profile();
  const topology::Cluster c = fat_tree(p, 18, Fabric{});
  const ExecGraph g = stage_classes(3, 6);
  const exec::SharingPlan plan = exec::plan_sharing(g, c, true);
  ASSERT_TRUE(plan.shared);
  for (std::int32_t r = 0; r < g.num_ranks; ++r) {
    const auto inst = static_cast<std::size_t>(plan.instance_of_rank[static_cast<std::size_t>(r)]);
    const exec::InstanceSpec& spec = plan.instances[inst];
    EXPECT_LE(spec.rank, r);
    EXPECT_EQ(spec.cls, g.class_of_rank[static_cast<std::size_t>(r)]);
    EXPECT_EQ(plan.instance_of_rank[static_cast<std::size_t>(spec.rank)],
              static_cast<std::int32_t>(inst));
  }
  for (std::size_t grp = 0; grp < g.groups.size(); ++grp) {
    std::set<std::int32_t> instances;
    for (std::int32_t r : g.groups[grp].ranks) {
      instances.insert(plan.instance_of_rank[static_cast<std::size_t>(r)]);
    }
    const auto match = static_cast<std::size_t>(plan.match_of_group[grp]);
    EXPECT_EQ(plan.required[match], static_cast<std::int32_t>(instances.size())) << "group " << grp;
  }
}

// One leaf per node group (no rails) and one oversubscribed spine link per leaf: the sends
// of a subclass's ranks share that link with each other, which the shared send must carry.
TEST(Refinement, SharedSendsLoadTheLinksTheirCopiesShare) {
  hw::Profile p = test_profile();
  Fabric f;
  f.rail_optimized = false;
  f.spines = 1;
  f.oversubscription = 8.0;
  const topology::Cluster c = fat_tree(p, 18, f);
  const ExecGraph g = stage_classes(3, 6);
  ASSERT_TRUE(asymmetric(g, c));
  RunStats full = run(per_rank(stage_major_groups(3, 6), 18, stage_major_graph(3, 6)), c, p);
  RunStats split = run(g, c, p);
  EXPECT_EQ(split.sharing_fallback, "");
  EXPECT_EQ(split.simulated_ranks, 9);
  expect_same(full, split);
}

// Two groups of the same members but different ring orders are copies of each other, yet
// their rings cross different routes (B crosses the oversubscribed spine twice each way, A
// once): the re-verification rejects sharing them, where one shared path would time B's
// all-reduce on A's ring.
TEST(Refinement, CopiesWithDifferentRingsFallBackToEveryRank) {
  hw::Profile p = test_profile();
  p.scale_out.latency = 1'000'000;
  Fabric f;
  f.devices_per_node = 4;  // ranks 0-3 on node 0, 4-7 on node 1, a leaf each
  f.nodes_per_leaf = 1;
  f.rail_optimized = false;
  f.oversubscription = 4.0;
  const topology::Cluster c = fat_tree(p, 8, f);
  std::vector<graph::Group> groups = {{GroupKind::kDP, {0, 1, 2, 3, 4, 5}},
                                      {GroupKind::kDP, {0, 4, 1, 5, 2, 3}}};
  MakeGraph make = [](ExecGraph& eg, int rank) {
    RankGraph rg;
    if (rank >= 6) {  // outside both groups
      rg.add(compute(eg, "idle", 10 * kUs));
      return rg;
    }
    auto a = rg.add(collective(eg, "ar_a", 0, CollType::kAllReduce, 16e6, Stream::kDP));
    rg.add(collective(eg, "ar_b", 1, CollType::kAllReduce, 16e6, Stream::kDP), {a});
    return rg;
  };
  const ExecGraph full_graph = per_rank(groups, 8, make);
  RunStats full = run(full_graph, c, p);
  RunStats fallback = run(shared(groups, {0, 0, 0, 0, 0, 0, 1, 1}, {0, 6}, make), c, p);
  EXPECT_EQ(fallback.simulated_ranks, 8);
  EXPECT_NE(fallback.sharing_fallback.find("rings differ"), std::string::npos)
      << fallback.sharing_fallback;
  expect_same(full, fallback);
  EXPECT_GT(duration(full, full_graph, "ar_b"), duration(full, full_graph, "ar_a"));
}

// The synthesizer's stage classes on a fat tree whose leaves split the stages: 3 stages of
// TP2 x DP12 on 8-GPU nodes, so each stage spans 3 nodes and leaves hold 4 (one spine, as
// Fabric says).
TEST(Refinement, SynthesizedStagesStraddlingLeavesMatchEveryRank) {
  synth::Scenario s = integration::tiny_like(2, 3, 12);
  s.model.layers = 3;
  s.training.global_batch = 48;
  s.cluster.topology = topology::TopologySpec{};
  s.cluster.topology.nodes_per_leaf = 4;
  s.cluster.topology.devices_per_node = 8;
  s.cluster.topology.spines = 1;
  const integration::Outcome shared_run = integration::run(s, /*share=*/true);
  const integration::Outcome full = integration::run(s, /*share=*/false);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  const topology::Cluster c(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  EXPECT_EQ(shared_run.graph.classes.size(), 3U);
  EXPECT_TRUE(asymmetric(shared_run.graph, c));
  EXPECT_EQ(shared_run.stats.sharing_fallback, "");
  EXPECT_GT(shared_run.stats.simulated_ranks, 3);
  EXPECT_LT(shared_run.stats.simulated_ranks, 72);
  EXPECT_EQ(full.stats.simulated_ranks, 72);
  EXPECT_GT(full.stats.step_time_s, 0.0);
  expect_same(full.stats, shared_run.stats);
}

}  // namespace
}  // namespace tessera::sim
