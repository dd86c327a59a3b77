// SPDX-License-Identifier: Apache-2.0
// Replaying every iteration of the shipped traces reproduces the measured iteration time
// (annotation start to the end of CPU step and GPU work) and the GPU's end within 1 %.
// Figures at the time of writing: the 2-rank trace replays within 0.01 %, the 8-rank within
// 0.35 %, the 16-rank within 0.5 % (its cross-stream waits are inferred from timing).
#include <gtest/gtest.h>

#include <algorithm>

#include "hwprofiles/hw_profile.h"
#include "measured/kineto_reader.h"
#include "measured/replay_graph.h"
#include "measured/retime.h"
#include "sim/simulation.h"
#include "tests/input_error.h"
#include "tests/kineto/kineto_oracle.h"
#include "topology/cluster.h"

namespace tessera::measured {
namespace {

constexpr double kTolerance = 0.01;

class Replay : public ::testing::TestWithParam<std::string> {};

TEST_P(Replay, ReproducesMeasuredIterations) {
  KinetoTrace t = read_kineto(kineto_test::testdata(GetParam()));
  IterationSet set = find_iterations(t);
  hw::Profile profile = hw::load_profile("a100-sxm-80gb");
  topology::Cluster cluster(topology::load_topology_preset("single-node", {}), profile, 1);
  ASSERT_FALSE(set.iterations.empty());
  for (std::size_t i = 0; i < set.iterations.size(); ++i) {
    ReplayGraph rg = build_replay(t, set, i);
    EXPECT_EQ(rg.stats.gpu_nodes, set.iterations[i].activities.size());
    sim::SimOptions opt;
    opt.share_rank_classes = false;
    opt.record_timeline = true;
    sim::RunStats r = sim::simulate(rg.graph, cluster, profile, opt);
    double measured = static_cast<double>(rg.measured_ns) * 1e-9;
    EXPECT_NEAR(r.step_time_s, measured, kTolerance * measured) << "iteration " << i;
    double gpu_end = 0.0;
    for (const sim::Span& s : r.spans) {
      if (s.stream != kHostStream) {
        gpu_end = std::max(gpu_end, base::to_seconds(s.end));
      }
    }
    const Iteration& it = set.iterations[i];
    double measured_gpu = static_cast<double>(it.gpu_end_ns - it.begin_ns) * 1e-9;
    EXPECT_NEAR(gpu_end, measured_gpu, kTolerance * measured_gpu) << "iteration " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Kineto, Replay, ::testing::ValuesIn(kineto_test::trace_names()),
                         [](const auto& p) {
                           std::string n = p.param.substr(0, p.param.find('.'));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(ReplayErrors, IterationOutOfRange) {
  KinetoTrace t = read_kineto(kineto_test::testdata("a100-2rank-ddp-rank0.json.gz"));
  IterationSet set = find_iterations(t);
  EXPECT_THROW(build_replay(t, set, 3), base::InputError);
}

// Found by fuzz/kineto_fuzz.cpp: a correlation id used by two runtime calls, the second long
// after its memcpy ran. Taking that call for the memcpy's launch made the replay's
// dependencies circular (memcpy -> inferred wait of the NCCL kernel -> the synchronize that
// waits for it -> the later call -> memcpy), which was reported as an internal error. A call
// after the activity started is not its launch.
TEST(ReplayErrors, RepeatedCorrelationAfterTheActivity) {
  std::string text = R"({"traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "tid": 1, "ts": 130, "dur": 4, "args": {"correlation": 2}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 160, "dur": 10, "args": {"stream": 8, "correlation": 2}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 140, "dur": 5, "args": {"correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "ts": 175, "dur": 50, "args": {"stream": 9, "correlation": 3}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "tid": 1, "ts": 200, "dur": 40},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 1010, "dur": 5, "args": {"correlation": 2}}
]})";
  KinetoTrace t = read_kineto_bytes(text, "repeated.json");
  IterationSet set = find_iterations(t);
  ASSERT_EQ(set.iterations.size(), 1U);
  // Without ProfilerStep annotations the one iteration starts at the first launch, so that
  // the activities launched before the first GPU start belong to it too.
  EXPECT_EQ(set.unassigned, 0);
  EXPECT_EQ(set.iterations[0].begin_ns, 130'000);
  ReplayGraph rg = build_replay(t, set, 0);
  EXPECT_EQ(rg.stats.gpu_nodes, 2U);
  EXPECT_EQ(rg.stats.launches, 2U);  // each activity by the call before it
  EXPECT_EQ(rg.stats.dropped_deps, 0U);
}

// Timestamps that contradict each other (a launch call inside a synchronize call on the same
// thread) make the timing-inferred dependencies circular: kernel X waits for the launch,
// which follows the synchronize, which waits for kernel W, which (inferred from timing) waits
// for X. The replay drops inferred dependencies until the graph is acyclic and says how many.
TEST(ReplayErrors, ContradictoryTimestampsDropInferredDependencies) {
  std::string text = R"({"traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 50, "dur": 5, "args": {"correlation": 6}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "tid": 1, "ts": 100, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 120, "dur": 5, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "x", "ts": 130, "dur": 10, "args": {"stream": 1, "correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "w", "ts": 150, "dur": 40, "args": {"stream": 2, "correlation": 6}}
]})";
  KinetoTrace t = read_kineto_bytes(text, "contradictory.json");
  IterationSet set = find_iterations(t);
  ASSERT_EQ(set.iterations.size(), 1U);
  ReplayGraph rg = build_replay(t, set, 0);
  EXPECT_EQ(rg.stats.gpu_nodes, 2U);
  EXPECT_EQ(rg.stats.sync_waits, 1U);
  EXPECT_EQ(rg.stats.inferred_waits, 1U);
  EXPECT_GE(rg.stats.dropped_deps, 1U);
  // What is left is a graph the simulator runs to the end.
  hw::Profile profile = hw::load_profile("a100-sxm-80gb");
  topology::Cluster cluster(topology::load_topology_preset("single-node", {}), profile, 1);
  sim::SimOptions opt;
  opt.share_rank_classes = false;
  EXPECT_GT(sim::simulate(rg.graph, cluster, profile, opt).step_time_s, 0.0);
}

// Found by fuzz/kineto_fuzz.cpp in CI: a timestamp of 9e16 us read as 9e19 ns overflowed
// int64 (the reader allowed |ts| up to 9e18 before multiplying by 1000). Numbers beyond what a
// trace can hold are now errors naming the event and the field; what is left in range cannot
// overflow the nanosecond clock, the totals or the replay's picoseconds.
TEST(ReplayErrors, OutOfRangeNumbersAreInputErrors) {
  auto trace = [](const std::string& kernel_fields) {
    return R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", )" + kernel_fields +
           R"(, "args": {"stream": 7}}]})";
  };
  auto error = [&](const std::string& fields) {
    return testing::error_of([&] { read_kineto_bytes(trace(fields), "big.json"); });
  };
  EXPECT_NE(error(R"("ts": 90044444444404000, "dur": 1)").find("'ts'"), std::string::npos);
  EXPECT_NE(error(R"("ts": -4.1e15, "dur": 1)").find("'ts'"), std::string::npos);
  EXPECT_NE(error(R"("ts": 1e300, "dur": 1)").find("'ts'"), std::string::npos);
  EXPECT_NE(error(R"("ts": 18446744073709551615, "dur": 1)").find("'ts'"), std::string::npos);
  std::string e = error(R"("ts": 1, "dur": 2e12)");
  EXPECT_NE(e.find("big.json"), std::string::npos) << e;
  EXPECT_NE(e.find("trace event 1: 'dur'"), std::string::npos) << e;
  EXPECT_NE(error(R"("ts": 1, "dur": 1, "args": {"bytes": 1e16})").find("'bytes'"),
            std::string::npos);
  // An id may be any integer, but not a float beyond int64.
  EXPECT_EQ(error(R"("ts": 1, "dur": 1, "tid": 9223372036854775807)"), "<no error>");
  EXPECT_NE(error(R"("ts": 1, "dur": 1, "tid": 1e19)").find("'tid'"), std::string::npos);
  // The largest values in range read exactly and replay.
  KinetoTrace t =
      read_kineto_bytes(trace(R"("ts": 4000000000000000, "dur": 1000000000000)"), "edge.json");
  ASSERT_EQ(t.gpu.size(), 1U);
  EXPECT_EQ(t.gpu[0].ts_ns, 4'000'000'000'000'000'000);
  EXPECT_EQ(t.gpu[0].dur_ns, 1'000'000'000'000'000);
  IterationSet set = find_iterations(t);
  EXPECT_EQ(build_replay(t, set, 0).stats.gpu_nodes, 1U);
}

// Two events 80 years apart: the host gap between them cannot be a replayed duration.
TEST(ReplayErrors, CenturyGapIsAnInputError) {
  std::string text = R"({"traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 1, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k", "ts": 11, "dur": 5, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 2500000000000000, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "k", "ts": 2500000000000010, "dur": 5, "args": {"stream": 7, "correlation": 2}}
]})";
  KinetoTrace t = read_kineto_bytes(text, "gap.json");
  IterationSet set = find_iterations(t);
  ASSERT_EQ(set.iterations.size(), 1U);
  std::string e = testing::error_of([&] { build_replay(t, set, 0); });
  EXPECT_NE(e.find("gap.json"), std::string::npos) << e;
  EXPECT_NE(e.find("gap of"), std::string::npos) << e;
}

// Moving measured durations to another profile: each class scales by the ratio of the rate
// that bounds it, computed here from the profile fields (models/compute/retime.h).
TEST(ReplayRetime, FactorsAreRatiosOfTheBoundingRates) {
  hw::Profile a100 = hw::load_profile("a100-sxm-80gb");
  hw::Profile h100 = hw::load_profile("h100-sxm");
  auto bf16 = [](const hw::Profile& p) { return p.peak(base::DType::kBF16); };
  measured::RetimeFactors f = measured::retime_factors(a100, h100, 8);
  EXPECT_DOUBLE_EQ(f.gemm,
                   bf16(a100) * a100.gemm.max_fraction / (bf16(h100) * h100.gemm.max_fraction));
  EXPECT_DOUBLE_EQ(f.attention,
                   bf16(a100) * a100.attention_fraction / (bf16(h100) * h100.attention_fraction));
  EXPECT_DOUBLE_EQ(f.memory, a100.hbm_bandwidth * a100.hbm_efficiency /
                                 (h100.hbm_bandwidth * h100.hbm_efficiency));
  EXPECT_TRUE(f.comm_scale_up_from && f.comm_scale_up_to);
  EXPECT_DOUBLE_EQ(f.comm, a100.scale_up.bandwidth * a100.scale_up.efficiency /
                               (h100.scale_up.bandwidth * h100.scale_up.efficiency));
  measured::RetimeFactors g = measured::retime_factors(a100, h100, 16);  // two nodes: the NICs
  EXPECT_FALSE(g.comm_scale_up_from || g.comm_scale_up_to);
  EXPECT_DOUBLE_EQ(g.comm, a100.scale_out.bandwidth * a100.scale_out.efficiency /
                               (h100.scale_out.bandwidth * h100.scale_out.efficiency));
  // Moving to the same profile changes nothing.
  measured::RetimeFactors same = measured::retime_factors(h100, h100, 8);
  EXPECT_EQ(same.gemm, 1.0);
  EXPECT_EQ(same.memory, 1.0);
}

// A GPU-bound iteration: the host launches a GEMM and an elementwise kernel, then copies the
// result to pageable memory, a call that returns when the copy is done (it waits in the call
// for 1.9 ms). The kernels start as their launch calls do (the replay has no launch latency). On
// the measured hardware the replay is exact; on a faster profile the kernels shrink by their
// factors and the host leaves the blocking copy that much earlier. Had the copy call been kept as
// host time, the iteration could not get shorter.
TEST(ReplayRetime, BlockingCopyFollowsTheGpu) {
  std::string text = R"json({"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "tid": 1, "ts": 0, "dur": 2090},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16", "ts": 10, "dur": 1000, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 30, "dur": 5, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 1010, "dur": 960, "args": {"stream": 7, "correlation": 2}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "tid": 1, "ts": 40, "dur": 1950, "args": {"correlation": 3}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "ts": 1970, "dur": 10, "args": {"stream": 7, "correlation": 3, "bytes": 4}}
]})json";
  KinetoTrace t = read_kineto_bytes(text, "blocking.json");
  IterationSet set = find_iterations(t);
  ASSERT_EQ(set.iterations.size(), 1U);
  hw::Profile a100 = hw::load_profile("a100-sxm-80gb");
  hw::Profile h100 = hw::load_profile("h100-sxm");
  topology::Cluster cluster(topology::load_topology_preset("single-node", {}), h100, 1);
  sim::SimOptions opt;
  opt.share_rank_classes = false;

  ReplayGraph measured = build_replay(t, set, 0);
  EXPECT_EQ(measured.stats.blocking_launches, 1U);
  EXPECT_NEAR(sim::simulate(measured.graph, cluster, a100, opt).step_time_s, 2090e-6, 1e-9);

  ReplayGraph moved = build_replay(t, set, 0);
  measured::RetimeFactors f = measured::retime(moved.graph, a100, h100, 1, kHostStream);
  EXPECT_EQ(f.gemm_nodes, 1U);
  EXPECT_EQ(f.memory_nodes, 1U);     // the elementwise kernel
  EXPECT_EQ(f.host_copy_nodes, 1U);  // the copy to the host: PCIe, kept as measured
  // The GPU chain from t = 10 us: GEMM, elementwise, copy; then the host leaves the call
  // (it returned 10 us after the copy ended) and idles to the step's end (100 us).
  double gpu_us = 1000.0 * f.gemm + 960.0 * f.memory + 10.0;
  double expected_us = 10.0 + gpu_us + 10.0 + 100.0;
  EXPECT_NEAR(sim::simulate(moved.graph, cluster, h100, opt).step_time_s, expected_us * 1e-6, 1e-8);
}

}  // namespace
}  // namespace tessera::measured
