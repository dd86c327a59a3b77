// SPDX-License-Identifier: Apache-2.0
// Helpers for the rank-class sharing tests: graphs built once per rank or once per class
// from the same per-rank recipe, and exact comparison of their statistics.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/simulation.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::simtest {

inline void expect_same(const sim::RankStats& a, const sim::RankStats& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.stage, b.stage);
  EXPECT_EQ(a.end_s, b.end_s) << "rank " << a.rank;
  EXPECT_EQ(a.compute_s, b.compute_s);
  EXPECT_EQ(a.comm_s, b.comm_s) << "rank " << a.rank;
  EXPECT_EQ(a.exposed_comm_s, b.exposed_comm_s) << "rank " << a.rank;
  EXPECT_EQ(a.idle_s, b.idle_s);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.peak_memory, b.peak_memory);
  EXPECT_EQ(a.static_memory, b.static_memory);
  EXPECT_EQ(a.oom, b.oom);
}

inline void expect_same(const sim::RunStats& a, const sim::RunStats& b) {
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    expect_same(a.ranks[i], b.ranks[i]);
  }
}

// The graph of one rank: `make(g, rank)` (it may intern names into g).
using MakeGraph = std::function<graph::RankGraph(graph::ExecGraph&, int)>;

// One class per rank.
inline graph::ExecGraph per_rank(std::vector<graph::Group> groups, int n, const MakeGraph& make) {
  graph::ExecGraph g;
  g.groups = std::move(groups);
  std::vector<graph::RankGraph> graphs;
  for (int r = 0; r < n; ++r) {
    graphs.push_back(make(g, r));
  }
  set_per_rank(g, graphs);
  return g;
}

// The given classes, each built from its representative's recipe.
inline graph::ExecGraph shared(std::vector<graph::Group> groups,
                               const std::vector<std::int32_t>& class_of_rank,
                               const std::vector<std::int32_t>& reps, const MakeGraph& make) {
  graph::ExecGraph g;
  g.groups = std::move(groups);
  g.num_ranks = static_cast<std::int32_t>(class_of_rank.size());
  g.class_of_rank = class_of_rank;
  g.class_rep = reps;
  for (std::int32_t rep : reps) {
    g.classes.push_back(make(g, rep));
  }
  return g;
}

}  // namespace tessera::simtest
