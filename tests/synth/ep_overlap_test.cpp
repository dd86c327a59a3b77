// SPDX-License-Identifier: Apache-2.0
// Overlapping expert-parallel all-to-alls across a paired forward and backward (docs/moe.md,
// "Overlap"): combined 1F1B's orders, the interleaving of a pair's nodes, and what the
// builder issues.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "synth/build/pair_interleave.h"
#include "synth/build/synthesize.h"
#include "synth/schedule/pipeline_schedule.h"
#include "synth/schedule/plan_check.h"
#include "tests/synth/moe_fixtures.h"

namespace tessera::synth {
namespace {

using graph::Node;
using graph::NodeId;
using graph::Stream;

ScheduleConfig combined(ScheduleKind kind, std::int64_t chunks = 1) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  cfg.chunks = chunks;
  cfg.combined_1f1b = true;
  return cfg;
}

// Megatron-Core's combined 1F1B without pipelining: one forward ahead, then each forward
// beside the previous microbatch's backward.
TEST(EpOverlap, CombinedOneFOneBPairsEachForwardWithTheLastBackward) {
  EXPECT_EQ(schedule::to_string(schedule::stage_order(combined(ScheduleKind::k1F1B), 1, 0, 4)),
            "F0 [F1&B0] [F2&B1] [F3&B2] B3");
}

// Interleaved: one warmup forward more than Megatron's 2(p-r-1) + (v-1)g, every steady-state
// forward paired, and the plan still runs every stage of every microbatch once.
TEST(EpOverlap, CombinedInterleavedWarmsUpOneMoreAndPairsTheSteadyState) {
  const ScheduleConfig cfg = combined(ScheduleKind::kInterleaved, 2);
  const int golden[] = {11, 9, 7, 5};
  for (int r = 0; r < 4; ++r) {
    const auto order = schedule::stage_order(cfg, 4, r, 8);
    int warmup = 0;
    while (!order[static_cast<std::size_t>(warmup)].paired) {
      ++warmup;
    }
    EXPECT_EQ(warmup, golden[r]) << "rank " << r;
    int pairs = 0;
    for (const auto& t : order) {
      pairs += t.paired ? 1 : 0;
    }
    EXPECT_EQ(pairs, 16 - golden[r]) << "rank " << r;
  }
  EXPECT_NO_THROW(schedule::check_plan(cfg, 4, 8));
}

Node on(Stream s) {
  Node n;
  n.stream = s;
  n.kind = s == Stream::kCompute ? graph::NodeKind::kCompute : graph::NodeKind::kCollective;
  return n;
}

// A forward of attention, dispatch, experts, combine, next layer (nodes 0-4) and a backward
// of unpermute, combine's backward, experts, dispatch's backward, the rest (5-9): the
// backward's first segment, then the forward's up to its dispatch, and so on in turn, each
// compute running while the other task's all-to-all is in flight.
TEST(EpOverlap, PairRunsInTurnsCutAtEachAllToAllWait) {
  graph::RankGraph g;
  const Node c = on(Stream::kCompute);
  const Node a2a = on(Stream::kEP);
  g.add(c);         // 0 F attention
  g.add(a2a, {0});  // 1 F dispatch
  g.add(c, {1});    // 2 F experts (waits)
  g.add(a2a, {2});  // 3 F combine
  g.add(c, {3});    // 4 F next layer (waits)
  g.add(c);         // 5 B unpermute backward
  g.add(a2a, {5});  // 6 B combine backward
  g.add(c, {6});    // 7 B experts backward (waits)
  g.add(a2a, {7});  // 8 B dispatch backward
  g.add(c, {8});    // 9 B attention backward (waits)
  const detail::TaskPair pair{0, 5, 10};
  EXPECT_EQ(detail::interleaved_order(g, pair),
            (std::vector<NodeId>{5, 6, 0, 1, 7, 8, 2, 3, 9, 4}));
  detail::interleave_pairs(g, {pair});
  for (NodeId n = 0; n < g.size(); ++n) {
    for (auto [d, e] = g.deps_of(n); d != e; ++d) {
      EXPECT_LT(*d, n);
    }
  }
  EXPECT_EQ(g.nodes[1].stream, Stream::kEP);  // B's combine backward, issued second
  EXPECT_EQ(g.deps_of(1).first[0], 0U);
}

// Without an all-to-all wait in one of the tasks there is nothing to overlap.
TEST(EpOverlap, PairWithoutAllToAllsKeepsItsOrder) {
  graph::RankGraph g;
  g.add(on(Stream::kCompute));
  g.add(on(Stream::kTP), {0});
  g.add(on(Stream::kCompute), {1});
  g.add(on(Stream::kCompute));
  EXPECT_TRUE(detail::interleaved_order(g, {0, 2, 4}).empty());
}

// The compute stream of a rank, as (microbatch, phase) runs: how often it switches between
// the second forward and the first backward.
int switches(const graph::RankGraph& g) {
  int out = 0;
  int last = -1;
  for (const Node& n : g.nodes) {
    if (n.stream != Stream::kCompute || n.microbatch < 0) {
      continue;
    }
    const int task = n.phase == graph::Phase::kForward ? n.microbatch : 10 + n.microbatch;
    if ((task == 1 || task == 10) && (last == 1 || last == 10) && task != last) {
      ++out;
    }
    last = task == 1 || task == 10 ? task : last;
  }
  return out;
}

// The builder interleaves F1 and B0 of combined 1F1B: four MoE layers, each a dispatch and a
// combine either way, give the two tasks' compute many turns; off, F1 then B0 whole.
TEST(EpOverlap, BuilderInterleavesThePairsCompute) {
  Scenario s = testing::moe_scenario(1, 8, 8);
  EXPECT_EQ(switches(synthesize(s).classes[0]), 1);
  s.parallel.ep_comm_overlap = true;
  const graph::ExecGraph g = synthesize(s);
  EXPECT_GE(switches(g.classes[0]), 2 * static_cast<int>(s.model.layers));
}

// The key's bad combinations name it (or the other key) with what is wrong.
TEST(EpOverlap, BadCombinationsNameTheKey) {
  Scenario s = testing::moe_scenario(1, 8, 8);
  s.parallel.ep_comm_overlap = true;
  EXPECT_TRUE(validate(s).empty());
  s.schedule.kind = ScheduleKind::kZbH1;
  auto v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].key, "parallelism.ep_comm_overlap");
  EXPECT_NE(v[0].message.find("zb-h1 with pp=1 has no such pairs"), std::string::npos)
      << v[0].message;
  s.schedule.kind = ScheduleKind::k1F1B;
  s.model.moe.shared_expert_overlap = true;
  v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].key, "model.moe.shared_expert_overlap");
  s = testing::moe_scenario(1, 8, 1);
  s.parallel.ep_comm_overlap = true;
  v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].message,
            "ep_comm_overlap overlaps the expert-parallel all-to-alls, which need model.moe and "
            "parallelism.ep > 1");
}

// The step's schedule derives combined 1F1B from the scenario wherever the schedule came from
// (`compare` replaces it); DualPipe(V)'s default leaves out what excludes the overlap.
TEST(EpOverlap, StepScheduleDerivesTheOverlapFromTheScenario) {
  Scenario s = testing::moe_scenario(1, 8, 8);
  s.parallel.ep_comm_overlap = true;
  EXPECT_TRUE(s.step_schedule().combined_1f1b);
  s.schedule = ScheduleConfig{};  // as `compare --schedules 1f1b` sets it
  EXPECT_TRUE(s.step_schedule().combined_1f1b);
  s.parallel.ep_comm_overlap.reset();
  EXPECT_FALSE(s.step_schedule().combined_1f1b);
  s.schedule.kind = ScheduleKind::kDualPipeV;
  EXPECT_TRUE(s.overlaps_ep_comm());
  EXPECT_FALSE(s.step_schedule().combined_1f1b);  // pairs by construction
  s.model.moe.dispatcher = MoeDispatcher::kAllGather;
  EXPECT_FALSE(s.overlaps_ep_comm());
  s.model.moe.dispatcher = MoeDispatcher::kAllToAll;
  s.model.moe.shared_expert_overlap = true;
  EXPECT_FALSE(s.overlaps_ep_comm());
}

}  // namespace
}  // namespace tessera::synth
