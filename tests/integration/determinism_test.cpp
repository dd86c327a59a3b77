// SPDX-License-Identifier: Apache-2.0
// Synthesis and simulation are deterministic: the same scenario gives the same graphs, node
// for node and field for field, and the same statistics and timeline, bit for bit.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

void expect_same_node(const graph::Node& a, const graph::Node& b, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.mem_alloc, b.mem_alloc);
  EXPECT_EQ(a.mem_free, b.mem_free);
  EXPECT_EQ(a.fixed_duration, b.fixed_duration);
  EXPECT_EQ(a.gemm.m, b.gemm.m);
  EXPECT_EQ(a.gemm.n, b.gemm.n);
  EXPECT_EQ(a.gemm.k, b.gemm.k);
  EXPECT_EQ(a.gemm.batch, b.gemm.batch);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.peer, b.peer);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.microbatch, b.microbatch);
  EXPECT_EQ(a.layer, b.layer);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.coll, b.coll);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.dtype, b.dtype);
}

void expect_same_graph(const graph::ExecGraph& a, const graph::ExecGraph& b) {
  EXPECT_EQ(a.num_ranks, b.num_ranks);
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.class_of_rank, b.class_of_rank);
  EXPECT_EQ(a.class_rep, b.class_rep);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (std::size_t i = 0; i < a.groups.size(); ++i) {
    EXPECT_EQ(a.groups[i].kind, b.groups[i].kind) << "group " << i;
    EXPECT_EQ(a.groups[i].ranks, b.groups[i].ranks) << "group " << i;
  }
  EXPECT_EQ(a.info.model_flops, b.info.model_flops);
  EXPECT_EQ(a.info.hardware_flops, b.info.hardware_flops);
  EXPECT_EQ(a.info.tokens, b.info.tokens);
  EXPECT_EQ(a.info.flops_convention, b.info.flops_convention);
  ASSERT_EQ(a.classes.size(), b.classes.size());
  for (std::size_t c = 0; c < a.classes.size(); ++c) {
    const graph::RankGraph& ga = a.classes[c];
    const graph::RankGraph& gb = b.classes[c];
    EXPECT_EQ(ga.static_memory, gb.static_memory) << "class " << c;
    EXPECT_EQ(ga.stage, gb.stage) << "class " << c;
    EXPECT_EQ(ga.dep_begin, gb.dep_begin) << "class " << c;
    EXPECT_EQ(ga.deps, gb.deps) << "class " << c;
    ASSERT_EQ(ga.nodes.size(), gb.nodes.size()) << "class " << c;
    for (std::size_t i = 0; i < ga.nodes.size(); ++i) {
      expect_same_node(ga.nodes[i], gb.nodes[i],
                       "class " + std::to_string(c) + " node " + std::to_string(i));
      if (::testing::Test::HasFailure()) {
        return;  // one differing node is enough; do not flood the log
      }
    }
  }
}

void expect_same_stats(const sim::RunStats& a, const sim::RunStats& b) {
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.simulated_ranks, b.simulated_ranks);
  EXPECT_EQ(a.sharing_fallback, b.sharing_fallback);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const sim::RankStats& x = a.ranks[r];
    const sim::RankStats& y = b.ranks[r];
    EXPECT_EQ(x.rank, y.rank);
    EXPECT_EQ(x.stage, y.stage);
    EXPECT_EQ(x.end_s, y.end_s);
    EXPECT_EQ(x.compute_s, y.compute_s);
    EXPECT_EQ(x.exposed_comm_s, y.exposed_comm_s);
    EXPECT_EQ(x.comm_s, y.comm_s);
    EXPECT_EQ(x.idle_s, y.idle_s);
    EXPECT_EQ(x.flops, y.flops);
    EXPECT_EQ(x.peak_memory, y.peak_memory);
    EXPECT_EQ(x.static_memory, y.static_memory);
    EXPECT_EQ(x.oom, y.oom);
  }
  ASSERT_EQ(a.spans.size(), b.spans.size());
  for (std::size_t i = 0; i < a.spans.size(); ++i) {
    const sim::Span& x = a.spans[i];
    const sim::Span& y = b.spans[i];
    EXPECT_TRUE(x.rank == y.rank && x.stream == y.stream && x.name == y.name &&
                x.microbatch == y.microbatch && x.start == y.start && x.end == y.end &&
                x.bytes == y.bytes && x.flops == y.flops)
        << "span " << i << " differs";
    if (::testing::Test::HasFailure()) {
      return;
    }
  }
}

class Determinism : public ::testing::TestWithParam<Case> {};

TEST_P(Determinism, SynthesisIsDeterministic) {
  for (bool share : {true, false}) {
    SCOPED_TRACE(share ? "shared classes" : "one graph per rank");
    const graph::ExecGraph a =
        synth::synthesize(GetParam().scenario, {.share_rank_classes = share});
    const graph::ExecGraph b =
        synth::synthesize(GetParam().scenario, {.share_rank_classes = share});
    expect_same_graph(a, b);
  }
}

TEST_P(Determinism, SimulationIsDeterministic) {
  for (bool share : {true, false}) {
    SCOPED_TRACE(share ? "shared classes" : "every rank");
    const Outcome a = run(GetParam().scenario, share, /*timeline=*/true);
    const Outcome b = run(GetParam().scenario, share, /*timeline=*/true);
    EXPECT_FALSE(a.stats.spans.empty());
    expect_same_stats(a.stats, b.stats);
  }
}

INSTANTIATE_TEST_SUITE_P(Integration, Determinism, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace tessera::integration
