// SPDX-License-Identifier: Apache-2.0
// End-to-end timing of small hand-built graphs against closed forms.
#include "sim/simulation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
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

TEST(Simulation, ChainOfFixedComputeNodesSumsExactly) {
  hw::Profile p = test_profile();
  ExecGraph g;
  RankGraph r;
  auto a = r.add(compute(g, "a", 1 * kUs));
  auto b = r.add(compute(g, "b", 2 * kUs + 500), {a});
  r.add(compute(g, "c", 3 * kUs + 1), {b});
  set_per_rank(g, {r});
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_EQ(span_of(s, g, 0, "c").end, 6 * kUs + 501);
  EXPECT_DOUBLE_EQ(s.step_time_s, base::to_seconds(6 * kUs + 501));
  ASSERT_EQ(s.ranks.size(), 1U);
  EXPECT_DOUBLE_EQ(s.ranks[0].compute_s, s.step_time_s);
  EXPECT_DOUBLE_EQ(s.ranks[0].idle_s, 0.0);
  EXPECT_EQ(s.simulated_ranks, 1);
  EXPECT_EQ(s.events, 3U);
}

TEST(Simulation, RooflineNodesUseTheProfile) {
  hw::Profile p = test_profile();
  p.launch.stream = 2000;
  ExecGraph g;
  RankGraph r;
  graph::Node copy = compute(g, "copy", -1);
  copy.op = graph::OpClass::kCopy;
  copy.bytes = 4e9;  // 2 ms at 2 TB/s
  copy.flops = 10.0;
  r.add(copy);
  set_per_rank(g, {r});
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_EQ(span_of(s, g, 0, "copy").end, 2000 + 2'000 * kUs);
  EXPECT_DOUBLE_EQ(s.ranks[0].flops, 10.0);
  EXPECT_DOUBLE_EQ(s.peak_flops, 1e15);
}

// A copy of `bytes` at 2 TB/s (the test profile's HBM), timed by the roofline model.
graph::Node copy_of(ExecGraph& g, const std::string& name, double bytes) {
  graph::Node n = compute(g, name, -1);
  n.op = graph::OpClass::kCopy;
  n.bytes = bytes;
  return n;
}

// One rank running a chain of copies of these sizes, named k0, k1, ...
ExecGraph copy_chain(const std::vector<double>& bytes) {
  ExecGraph g;
  RankGraph r;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    graph::Node n = copy_of(g, "k" + std::to_string(i), bytes[i]);
    if (i == 0) {
      r.add(n);
    } else {
      r.add(n, {static_cast<graph::NodeId>(i - 1)});
    }
  }
  set_per_rank(g, {r});
  return g;
}

// The host thread (sim/exec/host_thread.h) issues kernels at launch.host each and runs ahead
// of the device: a long kernel hides the issue of the short ones behind it, and short kernels
// alone run at the host's pace.
TEST(Simulation, TheHostIssuesKernelsInOrderAndRunsAhead) {
  hw::Profile p = test_profile();
  p.launch.host = 10 * kUs;
  // 100 us issued at 10 us, then three of 1 us issued at 20, 30 and 40 us.
  ExecGraph g = copy_chain({200e6, 2e6, 2e6, 2e6});
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_EQ(span_of(s, g, 0, "k0").start, 10 * kUs);
  EXPECT_EQ(span_of(s, g, 0, "k1").start, 110 * kUs);
  EXPECT_EQ(span_of(s, g, 0, "k3").end, 113 * kUs);
  // The device waits for the host only for the first issue.
  EXPECT_DOUBLE_EQ(s.ranks[0].host_wait_s, 10e-6);
  EXPECT_DOUBLE_EQ(s.ranks[0].idle_s, 0.0);

  ExecGraph h = copy_chain({2e6, 2e6, 2e6});  // the short kernels alone: the host's pace
  RunStats t = run(h, make_cluster(p, 8), p);
  EXPECT_EQ(span_of(t, h, 0, "k2").start, 30 * kUs);
  EXPECT_EQ(span_of(t, h, 0, "k2").end, 31 * kUs);
  // Waiting for the host: 0-10, 11-20 and 21-30 us, none of it a bubble.
  EXPECT_DOUBLE_EQ(t.ranks[0].host_wait_s, 28e-6);
  EXPECT_DOUBLE_EQ(t.ranks[0].idle_s, 0.0);
}

// After a node whose result the host reads (host_sync), the host issues nothing until it has
// finished: the kernels after it start a host cost apart, however early the host reached it.
TEST(Simulation, TheHostWaitsAtASyncNode) {
  hw::Profile p = test_profile();
  p.launch.host = 10 * kUs;
  ExecGraph g;
  RankGraph r;
  auto a = r.add(copy_of(g, "long", 200e6));  // 10 -> 110 us
  graph::Node counts = copy_of(g, "counts", 2e6);
  counts.host_sync = true;
  auto b = r.add(counts, {a});                     // issued at 20 us, 110 -> 111 us
  auto c = r.add(copy_of(g, "after1", 2e6), {b});  // issued at 121 us
  r.add(copy_of(g, "after2", 2e6), {c});           // issued at 131 us
  set_per_rank(g, {r});
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_EQ(span_of(s, g, 0, "counts").end, 111 * kUs);
  EXPECT_EQ(span_of(s, g, 0, "after1").start, 121 * kUs);
  EXPECT_EQ(span_of(s, g, 0, "after2").start, 131 * kUs);
  EXPECT_EQ(span_of(s, g, 0, "after2").end, 132 * kUs);
  // Waiting for the host: 0-10, 111-121 and 122-131 us.
  EXPECT_DOUBLE_EQ(s.ranks[0].host_wait_s, 29e-6);
  EXPECT_DOUBLE_EQ(s.ranks[0].idle_s, 0.0);
  p.launch.host = 0;  // no host thread: back to back
  RunStats eager = run(g, make_cluster(p, 8), p);
  EXPECT_EQ(span_of(eager, g, 0, "after2").end, 103 * kUs);
  EXPECT_DOUBLE_EQ(eager.ranks[0].host_wait_s, 0.0);
}

// n ranks on one NVSwitch, each running one collective of `bytes` on group 0.
ExecGraph one_collective(int n, CollType type, double bytes) {
  ExecGraph g;
  graph::Group group;
  for (int r = 0; r < n; ++r) {
    group.ranks.push_back(r);
  }
  g.groups.push_back(group);
  std::vector<RankGraph> graphs(static_cast<std::size_t>(n));
  for (auto& rg : graphs) {
    rg.add(collective(g, "coll", 0, type, bytes));
  }
  set_per_rank(g, graphs);
  return g;
}

TEST(Simulation, RingAllReduceMatchesTheAlphaBetaFormula) {
  hw::Profile p = test_profile();
  p.scale_up.latency = 100'000;  // 100 ns per hop
  p.collective_step = 1 * kUs;
  topology::Cluster c = make_cluster(p, 8);
  const int n = 4;
  const double bytes = 8e6;
  RunStats s = run(one_collective(n, CollType::kAllReduce, bytes), c, p);
  // 2(n-1) * (alpha + N/n * beta), beta = 1 / (100 GB/s) = 10 ps per byte, and the ring's
  // last, local step: a copy of N/n (read + write) at the 2 TB/s HBM, N/n ps.
  SimTime alpha = p.collective_step + c.path_latency(0, 1);
  SimTime expected = 2 * (n - 1) * (alpha + static_cast<SimTime>(bytes / n * 10)) +
                     static_cast<SimTime>(bytes / n);
  for (const Span& sp : s.spans) {
    EXPECT_EQ(sp.end, expected) << "rank " << sp.rank;
  }
  EXPECT_EQ(s.ranks[2].comm_s[static_cast<std::size_t>(GroupKind::kTP)],
            base::to_seconds(expected));
  EXPECT_EQ(s.ranks[2].exposed_comm_s[static_cast<std::size_t>(GroupKind::kTP)],
            base::to_seconds(expected));
}

TEST(Simulation, RingAllGatherAndLaunchCost) {
  hw::Profile p = test_profile();
  p.scale_up.latency = 250'000;
  p.collective_step = 2 * kUs;
  p.collective_launch = 7 * kUs;
  topology::Cluster c = make_cluster(p, 8);
  const int n = 8;
  const double bytes = 16e6;
  RunStats s = run(one_collective(n, CollType::kAllGather, bytes), c, p);
  SimTime alpha = p.collective_step + c.path_latency(0, 1);
  SimTime expected = p.collective_launch +
                     (n - 1) * (alpha + static_cast<SimTime>(bytes / n * 10)) +
                     static_cast<SimTime>(bytes / n);  // the local last step, as above
  EXPECT_EQ(span_of(s, one_collective(n, CollType::kAllGather, bytes), 5, "coll").end, expected);
}

TEST(Simulation, SingleMemberGroupCostsNothing) {
  hw::Profile p = test_profile();
  p.collective_launch = 7 * kUs;
  RunStats s = run(one_collective(1, CollType::kAllReduce, 1e9), make_cluster(p, 8), p);
  EXPECT_EQ(s.step_time_s, 0.0);
}

TEST(Simulation, CollectivesSharingALinkSplitItsBandwidth) {
  hw::Profile p = test_profile();
  ExecGraph g;
  g.groups.push_back({GroupKind::kTP, {0, 1}});
  g.groups.push_back({GroupKind::kDP, {0, 2}});
  std::vector<RankGraph> graphs(3);
  graphs[0].add(collective(g, "a", 0, CollType::kAllReduce, 1e6, Stream::kTP));
  graphs[0].add(collective(g, "b", 1, CollType::kAllReduce, 1e6, Stream::kDP));
  graphs[1].add(collective(g, "a", 0, CollType::kAllReduce, 1e6, Stream::kTP));
  graphs[2].add(collective(g, "b", 1, CollType::kAllReduce, 1e6, Stream::kDP));
  set_per_rank(g, graphs);
  RunStats s = run(g, make_cluster(p, 8), p);
  // Each flow carries 1 MB; device 0's uplink and downlink carry one flow of each group:
  // 20 us, and 0.5 us for the ring's local last step (a copy of 0.5 MB at 2 TB/s).
  EXPECT_EQ(span_of(s, g, 1, "a").end, 20'500'000);
  EXPECT_EQ(span_of(s, g, 2, "b").end, 20'500'000);
  // Both kinds overlap on rank 0 with no compute: the time is charged to TP.
  EXPECT_DOUBLE_EQ(s.ranks[0].exposed_comm_s[0], 20.5e-6);
  EXPECT_DOUBLE_EQ(s.ranks[0].exposed_comm_s[1], 0.0);
  EXPECT_DOUBLE_EQ(s.ranks[0].comm_s[1], 20.5e-6);
}

TEST(Simulation, CommunicationHiddenBehindComputeIsNotExposed) {
  hw::Profile p = test_profile();
  ExecGraph g;
  g.groups.push_back({GroupKind::kDP, {0, 1}});
  std::vector<RankGraph> graphs(2);
  for (auto& rg : graphs) {
    auto a = rg.add(compute(g, "fwd", 5 * kUs));
    rg.add(collective(g, "grad_ar", 0, CollType::kAllReduce, 1e6, Stream::kDP),
           {a});  // 10 us + 0.5 us local last step
    rg.add(compute(g, "more", 4 * kUs), {a});
  }
  set_per_rank(g, graphs);
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_DOUBLE_EQ(s.step_time_s, 15.5e-6);
  const RankStats& r = s.ranks[1];
  EXPECT_DOUBLE_EQ(r.compute_s, 9e-6);
  EXPECT_DOUBLE_EQ(r.comm_s[1], 10.5e-6);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s[1], 6.5e-6);
  EXPECT_NEAR(r.idle_s, 0.0, 1e-18);
}

TEST(Simulation, MemoryPeakAndOutOfMemory) {
  hw::Profile p = test_profile();
  ExecGraph g;
  set_per_rank(g, {memory_walk(g)});
  p.hbm_capacity = 200;
  p.reserved_memory = 30;
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_DOUBLE_EQ(s.ranks[0].peak_memory, 180.0);
  EXPECT_DOUBLE_EQ(s.ranks[0].static_memory, 100.0);
  EXPECT_DOUBLE_EQ(s.hbm_capacity, 170.0);
  EXPECT_TRUE(s.ranks[0].oom);
  p.reserved_memory = 20;
  EXPECT_FALSE(run(g, make_cluster(p, 8), p).ranks[0].oom);
}

TEST(Simulation, SendRecvCarriesBytesOverTheRoute) {
  hw::Profile p = test_profile();
  p.scale_up.latency = 100'000;
  p.collective_step = 1 * kUs;
  topology::Cluster c = make_cluster(p, 8);
  ExecGraph g;
  std::vector<RankGraph> graphs(2);
  auto f = graphs[0].add(compute(g, "f", 3 * kUs));
  graphs[0].add(send(g, "send", 1, 7, 2e6), {f});
  auto rv = graphs[1].add(recv(g, "recv", 0, 7, 2e6));
  graphs[1].add(compute(g, "g", 1 * kUs), {rv});
  set_per_rank(g, graphs);
  RunStats s = run(g, c, p);
  SimTime done = 3 * kUs + 20 * kUs + p.collective_step + c.path_latency(0, 1);
  EXPECT_EQ(span_of(s, g, 1, "recv").start, 3 * kUs);  // rendezvous
  EXPECT_EQ(span_of(s, g, 1, "recv").end, done);
  EXPECT_EQ(span_of(s, g, 0, "send").end, done);
  EXPECT_EQ(span_of(s, g, 1, "g").end, done + 1 * kUs);
  EXPECT_DOUBLE_EQ(s.ranks[1].comm_s[static_cast<std::size_t>(GroupKind::kPP)],
                   base::to_seconds(done - 3 * kUs));
}

TEST(Simulation, FixedDurationCommunicationIgnoresTheNetwork) {
  hw::Profile p = test_profile();
  p.collective_launch = 3 * kUs;
  ExecGraph g = one_collective(4, CollType::kAllReduce, 1e9);
  g.classes[2].nodes[0].fixed_duration = 5 * kUs;
  RunStats s = run(g, make_cluster(p, 8), p);
  EXPECT_DOUBLE_EQ(s.step_time_s, 5e-6);
}

TEST(Simulation, BroadcastIsAPipelinedChain) {
  hw::Profile p = test_profile();
  p.collective_step = 1 * kUs;
  topology::Cluster c = make_cluster(p, 8);
  RunStats s = run(one_collective(5, CollType::kBroadcast, 2e6), c, p, false);
  // 4 steps of latency, then the whole buffer once at link speed (every link carries one flow).
  EXPECT_DOUBLE_EQ(s.step_time_s, base::to_seconds(4 * p.collective_step + 20 * kUs));
  EXPECT_TRUE(s.spans.empty());  // no timeline asked for
}

TEST(Simulation, RanksBeyondTheClusterAreAnInputError) {
  hw::Profile p = test_profile();
  ExecGraph g = one_collective(8, CollType::kAllReduce, 1.0);
  EXPECT_THROW(run(g, make_cluster(p, 4, 4), p), base::InputError);
  g.groups[0].ranks[1] = 0;  // duplicate member
  EXPECT_THROW(run(g, make_cluster(p, 8), p), base::InputError);
}

TEST(Simulation, SameInputsGiveIdenticalOutputs) {
  hw::Profile p = test_profile();
  topology::Cluster c = make_cluster(p, 8);
  ExecGraph g = one_collective(8, CollType::kAllToAll, 3e6);
  RunStats a = run(g, c, p);
  RunStats b = run(g, c, p);
  ASSERT_EQ(a.spans.size(), b.spans.size());
  for (std::size_t i = 0; i < a.spans.size(); ++i) {
    EXPECT_EQ(a.spans[i].rank, b.spans[i].rank);
    EXPECT_EQ(a.spans[i].end, b.spans[i].end);
  }
  EXPECT_EQ(a.events, b.events);
  // All-to-all: 8 * 7 flows of 3e6/8 bytes; each uplink carries 7 of them.
  EXPECT_EQ(a.spans[0].end, std::llround(7 * 3e6 / 8 / 0.1));
}

}  // namespace
}  // namespace tessera::sim
