// SPDX-License-Identifier: Apache-2.0
// What the simulator hands the report beyond times: bytes sent per group kind (closed forms
// of the ring convention), the peak-memory breakdown, group positions, and which ranks the
// timeline records, and rank 0's collectives by the tuner's choice.
#include <gtest/gtest.h>

#include "base/error.h"
#include "sim/exec/sent_bytes.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::sim {
namespace {

using graph::CollType;
using graph::ExecGraph;
using graph::GroupKind;
using graph::RankGraph;
using graph::Stream;
using namespace simtest;  // NOLINT(google-build-using-namespace)

constexpr auto kTP = static_cast<std::size_t>(GroupKind::kTP);
constexpr auto kDP = static_cast<std::size_t>(GroupKind::kDP);
constexpr auto kPP = static_cast<std::size_t>(GroupKind::kPP);

TEST(SentBytes, RingClosedForms) {
  const double p = 1e6;
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kAllReduce, 2, p), p);
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kAllReduce, 8, p), 2.0 * 7.0 / 8.0 * p);
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kAllGather, 4, p), 0.75 * p);
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kReduceScatter, 4, p), 0.75 * p);
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kAllToAll, 4, p), 0.75 * p);
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kBroadcast, 4, p), p);
  EXPECT_DOUBLE_EQ(exec::ring_sent_bytes(CollType::kAllReduce, 1, p), 0.0);
}

// Ranks 0 and 1 all-reduce 1 MB over TP; ranks 0 and 2 all-gather 4 MB over DP; rank 0
// sends 1000 bytes to rank 2 (pipeline).
ExecGraph three_ranks() {
  ExecGraph g;
  g.groups.push_back({GroupKind::kTP, {0, 1}});
  g.groups.push_back({GroupKind::kDP, {0, 2}});
  std::vector<RankGraph> graphs(3);
  for (int r : {0, 1}) {
    graphs[static_cast<std::size_t>(r)].add(
        collective(g, "ar", 0, CollType::kAllReduce, 1e6, Stream::kTP));
  }
  for (int r : {0, 2}) {
    graphs[static_cast<std::size_t>(r)].add(
        collective(g, "ag", 1, CollType::kAllGather, 4e6, Stream::kDP));
  }
  graphs[0].add(send(g, "s", 2, 0, 1000.0));
  graphs[2].add(recv(g, "r", 0, 0, 1000.0));
  set_per_rank(g, graphs);
  return g;
}

TEST(SentBytes, PerRankAndKindFromTheSimulation) {
  hw::Profile p = test_profile();
  RunStats s = run(three_ranks(), make_cluster(p, 8), p);
  EXPECT_DOUBLE_EQ(s.ranks[0].sent_bytes[kTP], 1e6);  // 2 (n-1)/n P, n = 2
  EXPECT_DOUBLE_EQ(s.ranks[0].sent_bytes[kDP], 2e6);  // (n-1)/n P
  EXPECT_DOUBLE_EQ(s.ranks[0].sent_bytes[kPP], 1000.0);
  EXPECT_DOUBLE_EQ(s.ranks[1].sent_bytes[kTP], 1e6);
  EXPECT_DOUBLE_EQ(s.ranks[1].sent_bytes[kDP], 0.0);
  EXPECT_DOUBLE_EQ(s.ranks[2].sent_bytes[kPP], 0.0);  // receives count for the sender
  EXPECT_EQ(s.ranks[1].tp_index, 1);
  EXPECT_EQ(s.ranks[2].dp_index, 1);
  EXPECT_EQ(s.ranks[0].tp_index, 0);
}

// Rank 0's collectives: one TP all-reduce and one DP all-gather, each named by the tuner's
// choice and timed start to end; the send is not a collective. Rank 2's own all-gather is
// not counted twice.
TEST(CollectiveUses, RankZerosCollectivesByKindTypeAndChoice) {
  hw::Profile p = test_profile();
  ExecGraph g = three_ranks();
  RunStats s = run(g, make_cluster(p, 8), p, true, false);
  ASSERT_EQ(s.rank0_collectives.size(), 2U);
  const CollectiveUse& tp = s.rank0_collectives[0];
  const CollectiveUse& dp = s.rank0_collectives[1];
  EXPECT_EQ(tp.kind, GroupKind::kTP);
  EXPECT_EQ(tp.type, CollType::kAllReduce);
  EXPECT_EQ(dp.kind, GroupKind::kDP);
  EXPECT_EQ(dp.type, CollType::kAllGather);
  EXPECT_EQ(tp.calls, 1);
  EXPECT_EQ(dp.calls, 1);
  EXPECT_FALSE(tp.algorithm.empty());
  EXPECT_FALSE(dp.protocol.empty());
  const Span& ar = span_of(s, g, 0, "ar");  // the same interval the timeline shows
  EXPECT_DOUBLE_EQ(tp.time_s, base::to_seconds(ar.end - ar.start));
  EXPECT_EQ(tp.algorithm, ar.algorithm);
  EXPECT_EQ(tp.protocol, ar.protocol);
}

// static 100 (weights 20, gradients 30, optimizer 50); a: +50 (10 of them a comm buffer),
// b: +30 then -80 (the comm buffer among them), c: +60 -60. The peak, 180, is at b's start.
TEST(MemoryBreakdown, PartsSumToThePeak) {
  hw::Profile p = test_profile();
  ExecGraph g;
  RankGraph r = memory_walk(g);
  r.weight_memory = 20;
  r.grad_memory = 30;
  r.nodes[0].comm_alloc = 10;  // a
  r.nodes[1].comm_free = 10;   // b
  set_per_rank(g, {r});
  RunStats s = run(g, make_cluster(p, 8), p);
  const MemoryBreakdown& m = s.ranks[0].peak_breakdown;
  EXPECT_DOUBLE_EQ(s.ranks[0].peak_memory, 180.0);
  EXPECT_DOUBLE_EQ(m.weights, 20.0);
  EXPECT_DOUBLE_EQ(m.gradients, 30.0);
  EXPECT_DOUBLE_EQ(m.optimizer, 50.0);
  EXPECT_DOUBLE_EQ(m.comm_buffers, 10.0);
  EXPECT_DOUBLE_EQ(m.activations, 70.0);
  // The memory counter: one sample per time it changes, the last change at a time winning
  // (at 0: static memory, then a's allocation).
  ASSERT_GE(s.memory.size(), 3U);
  EXPECT_EQ(s.memory.front().time, 0);
  EXPECT_EQ(s.memory.front().bytes, 150);
  EXPECT_EQ(s.memory.back().bytes, 100);
}

TEST(TimelinePick, ChosenRanksOnly) {
  hw::Profile p = test_profile();
  ExecGraph g = three_ranks();
  SimOptions o;
  o.record_timeline = true;
  o.timeline_ranks = {1};
  RunStats s = simulate(g, make_cluster(p, 8), p, o);
  ASSERT_EQ(s.timeline_ranks.size(), 1U);
  EXPECT_EQ(s.timeline_ranks[0].rank, 1);
  EXPECT_EQ(s.timeline_ranks[0].source, 1);
  o.timeline_ranks = {3};
  EXPECT_THROW(simulate(g, make_cluster(p, 8), p, o), base::InputError);
  o.timeline_ranks = {};
  EXPECT_EQ(simulate(g, make_cluster(p, 8), p, o).timeline_ranks.size(), 3U);
}

}  // namespace
}  // namespace tessera::sim
