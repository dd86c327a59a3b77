// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules with uniform costs reproduce the golden orders, makespans and bubbles of
// pipeline_schedules.md (sections 2.0 to 2.2). The per-rank orders come from the real
// generator (synth::schedule::stage_order); the simulator times them, and the order in which
// each rank's compute nodes actually ran is checked against the golden strings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/simulation.h"
#include "synth/schedule/pipeline_schedule.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::sim {
namespace {

using base::SimTime;
using graph::ExecGraph;
using graph::RankGraph;
using synth::ScheduleKind;
using synth::schedule::stage_order;
using synth::schedule::Task;
using namespace simtest;  // NOLINT(google-build-using-namespace)

constexpr SimTime kUs = 1'000'000;  // one "time unit" of the reference (1 us)
constexpr double kUnit = 1e-6;      // the same in seconds

// Uniform costs in time units, and the per-message latency c of section 2.0.
struct Costs {
  SimTime f = 1 * kUs;
  SimTime b = 2 * kUs;
  SimTime c = 0;
};

std::string label(const Task& t) {
  return synth::schedule::to_string({t});
}

// Rank r's graph: each op waits on a zero-byte recv from its upstream stage and sends a
// zero-byte message downstream; F(j) = costs.f, B(j) = costs.b.
RankGraph stage_graph(ExecGraph& g, int p, int r, const std::vector<Task>& ops,
                      const Costs& costs) {
  RankGraph rg;
  rg.stage = r;
  for (const Task& op : ops) {
    const bool forward = op.kind == Task::kForward;
    const std::int64_t tag = 2 * op.microbatch + (forward ? 0 : 1);
    const int from = forward ? r - 1 : r + 1;
    const int to = forward ? r + 1 : r - 1;
    std::vector<graph::NodeId> deps;
    if (from >= 0 && from < p) {
      deps.push_back(rg.add(recv(g, "recv_" + label(op), from, tag)));
    }
    graph::Node c = compute(g, label(op), forward ? costs.f : costs.b);
    c.microbatch = op.microbatch;
    graph::NodeId n = rg.add(c, deps);
    if (to >= 0 && to < p) {
      rg.add(send(g, "send_" + label(op), to, tag), {n});
    }
  }
  return rg;
}

struct PipelineRun {
  ExecGraph graph;
  RunStats stats;
};

// A zero-byte send costs collective_step + path latency; the test profile's links have no
// latency, so collective_step is exactly the per-message latency c.
PipelineRun run_pipeline(ScheduleKind kind, int p, int m, const Costs& costs = {}) {
  hw::Profile prof = test_profile();
  prof.collective_step = costs.c;
  PipelineRun out;
  std::vector<RankGraph> graphs;
  for (int r = 0; r < p; ++r) {
    graphs.push_back(stage_graph(out.graph, p, r, stage_order(kind, p, r, m), costs));
  }
  set_per_rank(out.graph, graphs);
  out.stats = run(out.graph, make_cluster(prof, 8), prof, /*timeline=*/true);
  return out;
}

// The compute nodes of `rank` in the order the simulator started them.
std::string executed_order(const PipelineRun& pr, std::int32_t rank) {
  std::vector<Span> spans;
  for (const Span& s : pr.stats.spans) {
    if (s.rank == rank && s.stream == graph::Stream::kCompute) {
      spans.push_back(s);
    }
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span& a, const Span& b) { return a.start < b.start; });
  std::string text;
  for (const Span& s : spans) {
    text += (text.empty() ? "" : " ") + pr.graph.names[s.name];
  }
  return text;
}

// (m + p - 1)(F + B) in seconds.
double flush_makespan(int p, int m, const Costs& c) {
  return static_cast<double>(m + p - 1) * static_cast<double>(c.f + c.b) * kUnit /
         static_cast<double>(kUs);
}

// Section 2.0: bubble of rank r = T - busy_r, so sum_r(T - busy_r) = p*T - total work; with
// free communication nothing is exposed and the per-rank idle is exactly that bubble.
void expect_bubble_identity(const RunStats& s, int p, int m, const Costs& c) {
  const double t = s.step_time_s;
  const double work = static_cast<double>(p) * static_cast<double>(m) *
                      static_cast<double>(c.f + c.b) * kUnit / static_cast<double>(kUs);
  double bubbles = 0.0;
  double idle = 0.0;
  for (const RankStats& r : s.ranks) {
    bubbles += t - r.compute_s;
    idle += r.idle_s;
  }
  EXPECT_NEAR(bubbles, static_cast<double>(p) * t - work, 1e-15);
  if (c.c == 0) {
    EXPECT_NEAR(idle, bubbles, 1e-15);
  }
}

const std::vector<std::string>& golden_1f1b_p4_m8() {
  static const std::vector<std::string> golden = {
      "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
      "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
      "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
      "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"};
  return golden;
}

TEST(Pipeline, OneFOneBGeneratorMatchesGoldenOrdersForP4M8) {
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(synth::schedule::to_string(stage_order(ScheduleKind::k1F1B, 4, r, 8)),
              golden_1f1b_p4_m8()[static_cast<std::size_t>(r)])
        << "rank " << r;
  }
}

TEST(Pipeline, OneFOneBP4M8ExecutesGoldenOrderWithGoldenMakespan) {
  const Costs costs;
  PipelineRun pr = run_pipeline(ScheduleKind::k1F1B, 4, 8, costs);
  const RunStats& s = pr.stats;
  EXPECT_DOUBLE_EQ(s.step_time_s, 33e-6);
  EXPECT_DOUBLE_EQ(s.step_time_s, flush_makespan(4, 8, costs));
  ASSERT_EQ(s.ranks.size(), 4U);
  for (const RankStats& r : s.ranks) {
    EXPECT_DOUBLE_EQ(r.compute_s, 24e-6) << "rank " << r.rank;
    EXPECT_NEAR(r.idle_s, 9e-6, 1e-15) << "rank " << r.rank;
    EXPECT_EQ(r.stage, r.rank);
    EXPECT_EQ(executed_order(pr, r.rank), golden_1f1b_p4_m8()[static_cast<std::size_t>(r.rank)])
        << "rank " << r.rank;
  }
  expect_bubble_identity(s, 4, 8, costs);
}

TEST(Pipeline, GPipeP4M8) {
  const Costs costs;
  PipelineRun pr = run_pipeline(ScheduleKind::kGpipe, 4, 8, costs);
  const RunStats& s = pr.stats;
  EXPECT_DOUBLE_EQ(s.step_time_s, 33e-6);
  const std::string golden = "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7";
  for (const RankStats& r : s.ranks) {
    EXPECT_NEAR(r.idle_s, 9e-6, 1e-15) << "rank " << r.rank;
    EXPECT_EQ(synth::schedule::to_string(stage_order(ScheduleKind::kGpipe, 4, r.rank, 8)), golden);
    EXPECT_EQ(executed_order(pr, r.rank), golden) << "rank " << r.rank;
  }
  expect_bubble_identity(s, 4, 8, costs);
}

TEST(Pipeline, OneFOneBWithFewerMicrobatchesThanStages) {
  const Costs costs;
  const RunStats s = run_pipeline(ScheduleKind::k1F1B, 4, 2, costs).stats;
  EXPECT_DOUBLE_EQ(s.step_time_s, 15e-6);
  expect_bubble_identity(s, 4, 2, costs);
}

TEST(Pipeline, OneFOneBMakespanForOtherCosts) {
  for (const auto& [f, b, expected] : {std::tuple{1, 1, 22e-6}, std::tuple{2, 3, 55e-6}}) {
    Costs costs;
    costs.f = f * kUs;
    costs.b = b * kUs;
    for (ScheduleKind kind : {ScheduleKind::k1F1B, ScheduleKind::kGpipe}) {
      const RunStats s = run_pipeline(kind, 4, 8, costs).stats;
      EXPECT_DOUBLE_EQ(s.step_time_s, expected) << "F=" << f << " B=" << b;
      EXPECT_DOUBLE_EQ(s.step_time_s, flush_makespan(4, 8, costs));
      expect_bubble_identity(s, 4, 8, costs);
    }
  }
}

TEST(Pipeline, GPipeWithLatencyFollowsClosedForm) {
  // Section 2.1: T = (m+p-1)(F+B) + 2(p-1)c, e.g. 33.6 / 36 / 39 for c = 0.1 / 0.5 / 1.
  for (const auto& [c, expected] :
       {std::pair{kUs / 10, 33.6e-6}, std::pair{kUs / 2, 36e-6}, std::pair{kUs, 39e-6}}) {
    Costs costs;
    costs.c = c;
    PipelineRun pr = run_pipeline(ScheduleKind::kGpipe, 4, 8, costs);
    const double closed = flush_makespan(4, 8, costs) +
                          2.0 * 3.0 * static_cast<double>(c) * kUnit / static_cast<double>(kUs);
    EXPECT_NEAR(pr.stats.step_time_s, expected, 1e-15) << "c = " << c;
    EXPECT_NEAR(pr.stats.step_time_s, closed, 1e-15) << "c = " << c;
    for (const RankStats& r : pr.stats.ranks) {
      EXPECT_DOUBLE_EQ(r.compute_s, 24e-6) << "rank " << r.rank;
      EXPECT_EQ(executed_order(pr, r.rank), "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7")
          << "rank " << r.rank;
    }
    expect_bubble_identity(pr.stats, 4, 8, costs);
  }
}

}  // namespace
}  // namespace tessera::sim
