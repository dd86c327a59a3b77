// SPDX-License-Identifier: Apache-2.0
// measured::compare_trace: a trace against its own replay pairs every category one-to-one
// with the same counts; a measured rank the simulation lacks is compared with rank 0 and
// says so; categories only one side has are kept and marked.
#include "measured/trace_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "hwprofiles/hw_profile.h"
#include "measured/iterations.h"
#include "measured/kineto_reader.h"
#include "measured/replay_graph.h"
#include "sim/simulation.h"
#include "topology/cluster.h"

namespace tessera::measured {
namespace {

// Two steps, each a GEMM and an elementwise kernel on one stream; `rank` in distributedInfo.
std::string two_steps(int rank) {
  return R"({"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
"distributedInfo": {"rank": )" +
         std::to_string(rank) + R"(, "world_size": 4},
"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "tid": 1, "ts": 0, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16", "ts": 20, "dur": 30, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 16, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 50, "dur": 20, "args": {"stream": 7, "correlation": 2}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "tid": 1, "ts": 100, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16", "ts": 120, "dur": 30, "args": {"stream": 7, "correlation": 3}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 116, "dur": 5, "args": {"correlation": 4}},
{"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 150, "dur": 20, "args": {"stream": 7, "correlation": 4}}
]})";
}

struct Replayed {
  KinetoTrace trace;
  ReplayGraph replay;
  sim::RunStats stats;
};

Replayed replay_first(const std::string& text) {
  Replayed r{.trace = read_kineto_bytes(text, "two-steps.json"), .replay = {}, .stats = {}};
  IterationSet set = find_iterations(r.trace);
  r.replay = build_replay(r.trace, set, 0);
  hw::Profile a100 = hw::load_profile("a100-sxm-80gb");
  topology::Cluster cluster(topology::load_topology_preset("single-node", {}), a100,
                            r.replay.graph.num_ranks);
  sim::SimOptions opt;
  opt.share_rank_classes = false;
  r.stats = sim::simulate(r.replay.graph, cluster, a100, opt);
  return r;
}

const ComparedRow* find_row(const TraceComparison& c, const std::string& category) {
  auto it = std::find_if(c.rows.begin(), c.rows.end(),
                         [&](const ComparedRow& r) { return r.category == category; });
  return it == c.rows.end() ? nullptr : &*it;
}

TEST(TraceComparison, ATraceAgainstItsReplay) {
  Replayed r = replay_first(two_steps(0));
  TraceComparison c = compare_trace(r.trace, r.replay.graph, r.stats);
  EXPECT_EQ(c.file, "two-steps.json");
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.sim_rank, 0);
  EXPECT_EQ(c.iterations, 2U);
  const ComparedRow* gemm = find_row(c, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->section, "compute");
  EXPECT_EQ(gemm->match, "one-to-one");
  EXPECT_DOUBLE_EQ(gemm->measured.count, 1.0);  // per iteration
  EXPECT_DOUBLE_EQ(gemm->simulated.count, 1.0);
  EXPECT_NEAR(gemm->measured.time_s, 30e-6, 1e-12);
  EXPECT_NEAR(gemm->simulated.time_s, 30e-6, 1e-9);  // measured durations replay as they were
  EXPECT_NEAR(c.measured_step_s, 100e-6, 1e-12);
  EXPECT_EQ(c.simulated_step_s, r.stats.step_time_s);
  EXPECT_FALSE(c.measured_peak.has_value());      // no memory events
  EXPECT_EQ(find_row(c, "all-reduce"), nullptr);  // neither side has one: no row
}

TEST(TraceComparison, AMissingRankIsComparedWithRankZero) {
  Replayed r = replay_first(two_steps(3));
  TraceComparison c = compare_trace(r.trace, r.replay.graph, r.stats);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.sim_rank, 0);
  EXPECT_NE(c.note.find("measured rank 3 is not in the scenario"), std::string::npos) << c.note;
}

// The GEMMs are in the trace but not in the replay of one whose GEMMs became elementwise
// kernels: a row that says "measured only", next to the one-to-one rows.
TEST(TraceComparison, OneSidedCategoriesAreMarked) {
  std::string text = two_steps(0);
  std::string no_gemm = text;
  const std::string gemm = "sm80_xmma_gemm_bf16bf16";
  for (auto at = no_gemm.find(gemm); at != std::string::npos; at = no_gemm.find(gemm)) {
    no_gemm.replace(at, gemm.size(), "vectorized_elementwise_kernel");
  }
  Replayed r = replay_first(no_gemm);
  KinetoTrace full = read_kineto_bytes(text, "two-steps.json");
  TraceComparison c = compare_trace(full, r.replay.graph, r.stats);
  const ComparedRow* row = find_row(c, "gemm");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->match, "measured only");
  EXPECT_DOUBLE_EQ(row->simulated.count, 0.0);
}

}  // namespace
}  // namespace tessera::measured
