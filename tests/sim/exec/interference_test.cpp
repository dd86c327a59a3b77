// SPDX-License-Identifier: Apache-2.0
// Compute slowed by a collective in flight (sim/exec/interference.h): the rates against
// their formulas, and a kernel overlapped with a collective of C seconds ending where the
// closed form says: T + C (1 - r), r the kernel's rate while the collective runs.
#include "sim/exec/interference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>

#include "tests/sim/sim_test_util.h"

namespace tessera::exec {
namespace {

using base::SimTime;
using namespace simtest;  // NOLINT(google-build-using-namespace)

graph::Group pair_group(std::int32_t a, std::int32_t b) {
  graph::Group g;
  g.ranks = {a, b};
  return g;
}

graph::Node kernel(double flops, double bytes) {
  graph::Node n;
  n.op = graph::OpClass::kGemm;
  n.dtype = base::DType::kBF16;
  n.flops = flops;
  n.bytes = bytes;
  return n;
}

TEST(Interference, ComputeBoundKernelsLoseTheCollectiveSms) {
  hw::Profile p = test_profile();  // 132 SMs
  graph::Node ag;
  ag.kind = graph::NodeKind::kCollective;
  ag.coll = graph::CollType::kAllGather;
  p.collective.channels = 16;
  CollectiveLoad l = collective_load(ag, pair_group(0, 1), p, 0);
  EXPECT_EQ(l.sms, 16);  // the profile's ring channels, one CTA each
  EXPECT_EQ(collective_load(ag, pair_group(0, 1), p, 24).sms, 24);  // the tuner's algorithm
  ag.comm_sms = 1;  // an issuer's own choice (TE's ring exchange) wins
  EXPECT_EQ(collective_load(ag, pair_group(0, 1), p, 24).sms, 1);
  EXPECT_DOUBLE_EQ(interfered_rate(kernel(1e12, 1e6), p, l), (132.0 - 16.0) / 132.0);
}

TEST(Interference, MemoryBoundKernelsLoseTheCollectiveHbmShare) {
  hw::Profile p = test_profile();  // 2 TB/s HBM, 100 GB/s scale-up, 50 GB/s scale-out
  graph::Node rs;
  rs.kind = graph::NodeKind::kCollective;
  rs.coll = graph::CollType::kReduceScatter;
  // In one node: 3 bytes of HBM per byte sent at 100 GB/s = 0.15 of 2 TB/s.
  CollectiveLoad in_node = collective_load(rs, pair_group(0, 1), p, 0);
  EXPECT_DOUBLE_EQ(in_node.hbm_share, 3.0 * 100e9 / 2e12);
  // Across nodes the NIC (50 GB/s) sets the pace; an all-gather moves 2 bytes per byte.
  rs.coll = graph::CollType::kAllGather;
  EXPECT_DOUBLE_EQ(collective_load(rs, pair_group(0, 8), p, 0).hbm_share, 2.0 * 50e9 / 2e12);
  // The job's node size, where it uses part of each node (4 of the profile's 8 here), decides.
  EXPECT_DOUBLE_EQ(collective_load(rs, pair_group(3, 4), p, 0, 4).hbm_share, 2.0 * 50e9 / 2e12);
  EXPECT_DOUBLE_EQ(collective_load(rs, pair_group(3, 4), p, 0).hbm_share, 2.0 * 100e9 / 2e12);
  EXPECT_DOUBLE_EQ(interfered_rate(kernel(1.0, 1e9), p, in_node), 1.0 - 0.15);
  graph::Node fixed = kernel(1.0, 1e9);
  fixed.fixed_duration = 5;
  EXPECT_DOUBLE_EQ(interfered_rate(fixed, p, in_node), 1.0);  // imposed durations stay
}

TEST(Interference, RunningKernelsAreRetimedFromTheChange) {
  RunningKernels k;
  EXPECT_EQ(k.start(7, 1000, 1.0, 0), 1000);
  std::vector<RunningKernels::Moved> moved;
  k.rerate(
      200, [](graph::NodeId) { return 0.5; }, moved);  // 800 left at half speed
  ASSERT_EQ(moved.size(), 1U);
  EXPECT_EQ(moved[0].end, 1800);
  SimTime started = -1;
  EXPECT_FALSE(k.finish(7, 1000, started));  // the stale event
  EXPECT_TRUE(k.finish(7, 1800, started));
  EXPECT_EQ(started, 0);
}

// Two ranks in one node: a kernel of T (what the compute model gives it alone) beside an
// all-gather that takes C = 100 us (20 MB over 100 GB/s, half of it sent).
// The ring the tuner picks holds the profile's 16 channels, one SM each.
sim::RunStats overlapped(bool interference, double kernel_flops, double kernel_bytes) {
  hw::Profile p = test_profile();
  p.collective.channels = 16;
  graph::ExecGraph g;
  g.groups.push_back(pair_group(0, 1));
  std::vector<graph::RankGraph> graphs(2);
  for (auto& r : graphs) {
    graph::Node k = compute(g, "gemm", -1);
    k.op = graph::OpClass::kGemm;
    k.flops = kernel_flops;
    k.bytes = kernel_bytes;
    r.add(k);
    r.add(collective(g, "ag", 0, graph::CollType::kAllGather, 20e6));
  }
  set_per_rank(g, graphs);
  sim::SimOptions o;
  o.record_timeline = true;
  if (!interference) {
    o.effects.disable("comm-interference");
  }
  return sim::simulate(g, make_cluster(p, 8), p, o);
}

// Rank 0's span of the kind asked for.
sim::Span span(const sim::RunStats& stats, graph::NodeKind kind) {
  for (const sim::Span& s : stats.spans) {
    if (s.rank == 0 && s.kind == kind) {
      return s;
    }
  }
  ADD_FAILURE() << "no span of that kind";
  return {};
}

TEST(Interference, KernelBesideACollectiveEndsAtTheClosedForm) {
  sim::RunStats off = overlapped(false, 1e12, 0.0);
  sim::RunStats on = overlapped(true, 1e12, 0.0);
  const sim::Span k_off = span(off, graph::NodeKind::kCompute);
  const double t = base::to_seconds(k_off.end - k_off.start);
  const sim::Span coll = span(on, graph::NodeKind::kCollective);
  const double c = base::to_seconds(coll.end - coll.start);
  const double end = base::to_seconds(span(on, graph::NodeKind::kCompute).end);
  ASSERT_GT(c, 0.0);
  ASSERT_LT(c, t);
  const double r = (132.0 - 16.0) / 132.0;
  EXPECT_NEAR(end, t + c * (1.0 - r), 1e-11);
  EXPECT_NEAR(base::to_seconds(k_off.end), t, 1e-12);  // off: the kernel ends at T
  EXPECT_NEAR(on.ranks[0].compute_s, end, 1e-11);      // compute time is what it took
}

// A memory-bound kernel (2 GB at 2 TB/s) loses the all-gather's HBM share instead.
TEST(Interference, MemoryBoundKernelLosesTheHbmShare) {
  sim::RunStats off = overlapped(false, 1e9, 2e9);
  sim::RunStats on = overlapped(true, 1e9, 2e9);
  const sim::Span k_off = span(off, graph::NodeKind::kCompute);
  const double t = base::to_seconds(k_off.end - k_off.start);
  const sim::Span coll = span(on, graph::NodeKind::kCollective);
  const double c = base::to_seconds(coll.end - coll.start);
  const double r = 1.0 - 2.0 * 100e9 / 2e12;
  EXPECT_NEAR(base::to_seconds(span(on, graph::NodeKind::kCompute).end), t + c * (1.0 - r), 1e-11);
}

// The per-kernel slowdowns docs/overlap.md quotes for an H100, printed beside the aggregate
// of calibration/microbench/overheads.yaml overlap-interference-characterization (overlapped
// compute 18.9% slower on average, 40% at most; not fitted to it).
TEST(Interference, H100SlowdownsAsDocumented) {
  const hw::Profile p = hw::load_profile("h100-sxm");
  graph::Node coll;
  coll.kind = graph::NodeKind::kCollective;
  auto slowdown = [&](const graph::Node& k, graph::CollType t, const graph::Group& g, int n) {
    coll.coll = t;
    CollectiveLoad one = collective_load(coll, g, p, 0);
    CollectiveLoad all{one.sms * n, one.hbm_share * n};
    return 1.0 / interfered_rate(k, p, all) - 1.0;
  };
  const graph::Node gemm = kernel(1e12, 1e6);
  const graph::Node stream = kernel(1e6, 1e9);
  struct Row {
    const char* what;
    double model;
    double documented;
  };
  const Row rows[] = {
      {"compute-bound, one collective",
       slowdown(gemm, graph::CollType::kAllGather, pair_group(0, 1), 1), 0.138},
      {"compute-bound, two collectives",
       slowdown(gemm, graph::CollType::kAllGather, pair_group(0, 1), 2), 0.32},
      {"memory-bound, NVLink reduce-scatter",
       slowdown(stream, graph::CollType::kReduceScatter, pair_group(0, 1), 1), 0.58},
      {"memory-bound, NVLink all-gather",
       slowdown(stream, graph::CollType::kAllGather, pair_group(0, 1), 1), 0.32},
      {"memory-bound, inter-node reduce-scatter",
       slowdown(stream, graph::CollType::kReduceScatter, pair_group(0, 8), 1), 0.05},
  };
  std::cout << "| kernel beside | model | docs/overlap.md |\n|---|---|---|\n";
  for (const Row& r : rows) {
    std::cout << fmt::format("| {} | {:.1f}% | {:.1f}% |\n", r.what, 100 * r.model,
                             100 * r.documented);
    EXPECT_NEAR(r.model, r.documented, 0.02) << r.what;
  }
  std::cout << "measured (arXiv 2507.03114, all overlapped compute): 18.9% on average, 40% at "
               "most\n";
}

}  // namespace
}  // namespace tessera::exec
