// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules with uniform costs and free communication reproduce the golden
// makespans and bubbles of pipeline_schedules.md (sections 2.1 and 2.2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/simulation.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::sim {
namespace {

using base::SimTime;
using graph::ExecGraph;
using graph::RankGraph;
using namespace simtest;  // NOLINT(google-build-using-namespace)

constexpr SimTime kUs = 1'000'000;

struct Op {
  bool forward;
  int mb;
};

// Megatron 1F1B order for rank r (pipeline_schedules.md 2.2).
std::vector<Op> one_f_one_b(int p, int m, int r) {
  int warmup = std::min(p - r - 1, m);
  std::vector<Op> ops;
  for (int i = 0; i < warmup; ++i) {
    ops.push_back({true, i});
  }
  for (int i = 0; i < m - warmup; ++i) {
    ops.push_back({true, warmup + i});
    ops.push_back({false, i});
  }
  for (int i = m - warmup; i < m; ++i) {
    ops.push_back({false, i});
  }
  return ops;
}

std::vector<Op> gpipe(int m) {
  std::vector<Op> ops;
  for (int i = 0; i < m; ++i) {
    ops.push_back({true, i});
  }
  for (int i = 0; i < m; ++i) {
    ops.push_back({false, i});
  }
  return ops;
}

std::string label(const Op& op) {
  return (op.forward ? "F" : "B") + std::to_string(op.mb);
}

// Rank r's graph: each op waits on a zero-byte recv from its upstream stage and sends a
// zero-byte message downstream; F(j) = F, B(j) = B time units.
RankGraph stage_graph(ExecGraph& g, int p, int r, const std::vector<Op>& ops) {
  RankGraph rg;
  rg.stage = r;
  for (const Op& op : ops) {
    const std::int64_t tag = 2 * op.mb + (op.forward ? 0 : 1);
    const int from = op.forward ? r - 1 : r + 1;
    const int to = op.forward ? r + 1 : r - 1;
    std::vector<graph::NodeId> deps;
    if (from >= 0 && from < p) {
      deps.push_back(rg.add(recv(g, "recv_" + label(op), from, tag)));
    }
    graph::Node c = compute(g, label(op), op.forward ? 1 * kUs : 2 * kUs);
    c.microbatch = op.mb;
    graph::NodeId n = rg.add(c, deps);
    if (to >= 0 && to < p) {
      rg.add(send(g, "send_" + label(op), to, tag), {n});
    }
  }
  return rg;
}

RunStats run_pipeline(int p, int m, bool use_gpipe) {
  hw::Profile prof = test_profile();
  ExecGraph g;
  std::vector<RankGraph> graphs;
  for (int r = 0; r < p; ++r) {
    graphs.push_back(stage_graph(g, p, r, use_gpipe ? gpipe(m) : one_f_one_b(p, m, r)));
  }
  set_per_rank(g, graphs);
  return run(g, make_cluster(prof, 8), prof, false);
}

TEST(Pipeline, OneFOneBGoldenOrdersForP4M8) {
  // The generator reproduces the golden orders of section 2.2 token for token.
  const std::vector<std::string> golden = {"F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
                                           "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
                                           "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
                                           "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"};
  for (int r = 0; r < 4; ++r) {
    std::string text;
    for (const Op& op : one_f_one_b(4, 8, r)) {
      text += (text.empty() ? "" : " ") + label(op);
    }
    EXPECT_EQ(text, golden[static_cast<std::size_t>(r)]);
  }
  RunStats s = run_pipeline(4, 8, false);
  EXPECT_DOUBLE_EQ(s.step_time_s, 33e-6);
  for (const RankStats& r : s.ranks) {
    EXPECT_DOUBLE_EQ(r.compute_s, 24e-6) << "rank " << r.rank;
    EXPECT_NEAR(r.idle_s, 9e-6, 1e-15) << "rank " << r.rank;
    EXPECT_EQ(r.stage, r.rank);
  }
}

TEST(Pipeline, GPipeP4M8) {
  RunStats s = run_pipeline(4, 8, true);
  EXPECT_DOUBLE_EQ(s.step_time_s, 33e-6);
  for (const RankStats& r : s.ranks) {
    EXPECT_NEAR(r.idle_s, 9e-6, 1e-15) << "rank " << r.rank;
  }
}

TEST(Pipeline, OneFOneBWithFewerMicrobatchesThanStages) {
  EXPECT_DOUBLE_EQ(run_pipeline(4, 2, false).step_time_s, 15e-6);
}

}  // namespace
}  // namespace tessera::sim
