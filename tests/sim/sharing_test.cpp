// SPDX-License-Identifier: Apache-2.0
// Simulating one representative per rank class gives exactly what simulating every rank
// gives; classes whose ranks do not see the same network are split (refinement_test.cpp has
// more), and every rank is simulated when splitting leaves each rank on its own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "sim/simulation.h"
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

// TP = 2 x DP = 4 on one node: groups 0-3 are TP pairs, 4-5 the DP groups.
std::vector<graph::Group> tp_dp_groups() {
  std::vector<graph::Group> groups;
  for (int i = 0; i < 4; ++i) {
    groups.push_back({GroupKind::kTP, {2 * i, 2 * i + 1}});
  }
  groups.push_back({GroupKind::kDP, {0, 2, 4, 6}});
  groups.push_back({GroupKind::kDP, {1, 3, 5, 7}});
  return groups;
}

RankGraph tp_dp_graph(ExecGraph& g, int rank) {
  RankGraph rg;
  rg.static_memory = 1000;
  graph::Node f = compute(g, "fwd", -1);
  f.op = graph::OpClass::kGemm;
  f.flops = 2.0 * 1024 * 1024 * 2048;
  f.bytes = 3.0 * 1024 * 1024 * 2;
  f.gemm = {1024, 1024, 2048, 1};
  f.mem_alloc = 500;
  auto a = rg.add(f);
  auto t = rg.add(collective(g, "tp_ar", rank / 2, CollType::kAllReduce, 4e6), {a});
  graph::Node b = compute(g, "bwd", 3 * kUs);
  b.mem_free = 500;
  auto bw = rg.add(b, {t});
  rg.add(collective(g, "dp_rs", 4 + rank % 2, CollType::kReduceScatter, 32e6, Stream::kDP), {bw});
  rg.add(collective(g, "tp_ag", rank / 2, CollType::kAllGather, 2e6), {bw});
  rg.add(compute(g, "tail", 50 * kUs), {bw});
  return rg;
}

TEST(Sharing, OneClassGivesTheSameStatsAsEveryRank) {
  hw::Profile p = test_profile();
  p.collective_step = 500'000;
  p.scale_up.latency = 100'000;
  topology::Cluster c = make_cluster(p, 8);
  RunStats full = run(per_rank(tp_dp_groups(), 8, tp_dp_graph), c, p);
  RunStats one =
      run(shared(tp_dp_groups(), std::vector<std::int32_t>(8, 0), {0}, tp_dp_graph), c, p);
  EXPECT_EQ(full.simulated_ranks, 8);
  EXPECT_EQ(one.simulated_ranks, 1);
  EXPECT_EQ(one.sharing_fallback, "");
  expect_same(full, one);
  EXPECT_GT(one.ranks[5].exposed_comm_s[0], 0.0);
  EXPECT_LT(one.events, full.events);
}

TEST(Sharing, SharedClassesNeedSharingOn) {
  hw::Profile p = test_profile();
  topology::Cluster c = make_cluster(p, 8);
  ExecGraph g = shared(tp_dp_groups(), std::vector<std::int32_t>(8, 0), {0}, tp_dp_graph);
  EXPECT_THROW(run(g, c, p, false, false), base::InputError);
}

// A pipeline of `p` stages and `dp` replicas, rank = stage + p * replica; groups: one kPP
// group per replica, one kDP group per stage, one kPP embedding group {first, last stage}
// per replica (the same ranks as the pipeline group when p = 2). Forward sends go
// downstream, backward sends upstream, then the embedding and the stage's DP all-reduces.
std::vector<graph::Group> pp_dp_groups(int p, int dp) {
  std::vector<graph::Group> groups;
  for (int d = 0; d < dp; ++d) {
    graph::Group pp{GroupKind::kPP, {}};
    for (int s = 0; s < p; ++s) {
      pp.ranks.push_back(s + p * d);
    }
    groups.push_back(pp);
  }
  for (int s = 0; s < p; ++s) {
    graph::Group dpg{GroupKind::kDP, {}};
    for (int d = 0; d < dp; ++d) {
      dpg.ranks.push_back(s + p * d);
    }
    groups.push_back(dpg);
  }
  for (int d = 0; d < dp; ++d) {  // embedding groups: first and last stage of each replica
    groups.push_back({GroupKind::kPP, {p * d, p * d + p - 1}});
  }
  return groups;
}

MakeGraph pp_dp_graph(int p, int dp) {
  return [p, dp](ExecGraph& g, int rank) {
    const int s = rank % p;
    RankGraph rg;
    rg.stage = s;
    std::vector<graph::NodeId> deps;
    if (s > 0) {
      deps.push_back(rg.add(recv(g, "recv_act", rank - 1, 0, 8e6)));
    }
    auto f = rg.add(compute(g, "fwd", 10 * kUs), deps);
    if (s + 1 < p) {
      rg.add(send(g, "send_act", rank + 1, 0, 8e6), {f});
      deps = {rg.add(recv(g, "recv_grad", rank + 1, 1, 8e6))};
    } else {
      deps = {f};
    }
    auto b = rg.add(compute(g, "bwd", 20 * kUs), deps);
    if (s > 0) {
      rg.add(send(g, "send_grad", rank - 1, 1, 8e6), {b});
    }
    if (s == 0 || s == p - 1) {
      rg.add(collective(g, "embed_ar", dp + p + rank / p, CollType::kAllReduce, 4e6, Stream::kDP),
             {b});
    }
    rg.add(collective(g, "dp_ar", dp + s, CollType::kAllReduce, 16e6, Stream::kDP), {b});
    return rg;
  };
}

std::vector<std::int32_t> stage_classes(int p, int dp) {
  std::vector<std::int32_t> cls;
  for (int r = 0; r < p * dp; ++r) {
    cls.push_back(r % p);
  }
  return cls;
}

std::vector<std::int32_t> first_replica(int p) {
  std::vector<std::int32_t> reps;
  for (int s = 0; s < p; ++s) {
    reps.push_back(s);
  }
  return reps;
}

TEST(Sharing, SymmetricPipelineSharesStagesAcrossNodes) {
  hw::Profile p = test_profile();
  p.scale_out.latency = 1'000'000;
  topology::Cluster c = make_cluster(p, 8, 2);  // replica d on node d
  RunStats full = run(per_rank(pp_dp_groups(2, 4), 8, pp_dp_graph(2, 4)), c, p);
  RunStats shared_run = run(
      shared(pp_dp_groups(2, 4), stage_classes(2, 4), first_replica(2), pp_dp_graph(2, 4)), c, p);
  EXPECT_EQ(shared_run.simulated_ranks, 2);
  EXPECT_EQ(shared_run.sharing_fallback, "");
  expect_same(full, shared_run);
}

TEST(Sharing, AsymmetricClassesFallBackToEveryRankWithRelabelledGraphs) {
  hw::Profile p = test_profile();
  p.scale_out.latency = 1'000'000;
  topology::Cluster c = make_cluster(p, 6, 2);  // 3 stages x 2 replicas over 3 nodes
  RunStats full = run(per_rank(pp_dp_groups(3, 2), 6, pp_dp_graph(3, 2)), c, p);
  RunStats fallback = run(
      shared(pp_dp_groups(3, 2), stage_classes(3, 2), first_replica(3), pp_dp_graph(3, 2)), c, p);
  EXPECT_EQ(fallback.simulated_ranks, 6);
  EXPECT_NE(fallback.sharing_fallback.find("sees different routes"), std::string::npos)
      << fallback.sharing_fallback;
  expect_same(full, fallback);
  // Stage 0 of replica 0 sends inside its node, of replica 1 across nodes: they differ.
  const auto pp = static_cast<std::size_t>(GroupKind::kPP);
  EXPECT_LT(full.ranks[0].comm_s[pp], full.ranks[3].comm_s[pp]);
}

TEST(Sharing, SplitClassesRelabelGroupsListedTwice) {
  hw::Profile p = test_profile();
  p.scale_out.latency = 1'000'000;
  topology::Cluster c = make_cluster(p, 6, 3);  // replica 1 = ranks {2, 3} spans two nodes
  RunStats full = run(per_rank(pp_dp_groups(2, 3), 6, pp_dp_graph(2, 3)), c, p);
  RunStats split = run(
      shared(pp_dp_groups(2, 3), stage_classes(2, 3), first_replica(2), pp_dp_graph(2, 3)), c, p);
  // Replicas 0 and 2 stay inside a node, replica 1 does not: each stage splits in two, and
  // rank 5 (stage 1 of replica 2) runs the class graph of rank 1 relabelled, its pipeline
  // group listed twice (also as the embedding group).
  EXPECT_EQ(split.simulated_ranks, 4);
  EXPECT_EQ(split.sharing_fallback, "");
  expect_same(full, split);
}

}  // namespace
}  // namespace tessera::sim
