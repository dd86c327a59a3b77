// SPDX-License-Identifier: Apache-2.0
// experiments::replay_iteration: a measured iteration replayed as measured, moved to another
// profile, and the hardware a trace names.
#include "experiments/replay.h"

#include <gtest/gtest.h>

#include <string>

#include "measured/iterations.h"
#include "measured/kineto_reader.h"
#include "tests/input_error.h"

namespace tessera::experiments {
namespace {

// One step: a 1 ms GEMM launched at 10 us, on an A100 (or a device no profile matches).
measured::KinetoTrace one_gemm(const std::string& device) {
  return measured::read_kineto_bytes(R"({"deviceProperties": [{"name": ")" + device + R"("}],
"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "tid": 1, "ts": 0, "dur": 1100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16", "ts": 20, "dur": 1000, "args": {"stream": 7, "correlation": 1}}
]})",
                                     "one-gemm.json");
}

TEST(ProfileOfDevice, ShippedProfiles) {
  EXPECT_EQ(profile_of_device("NVIDIA A100-SXM4-80GB"), "a100-sxm-80gb");
  EXPECT_EQ(profile_of_device("NVIDIA H800"), "h800-sxm");
  EXPECT_EQ(profile_of_device("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(profile_of_device("NVIDIA H200"), "h200-sxm");
  EXPECT_EQ(profile_of_device("NVIDIA B200"), "b200");
  EXPECT_EQ(profile_of_device("GB200 NVL72 (B200 GPUs in GB200 superchips)"), "gb200");
  EXPECT_EQ(profile_of_device("Ascend910B3"), "ascend-910b");
  EXPECT_EQ(profile_of_device("Some GPU"), "");
}

TEST(ReplayIteration, AsMeasured) {
  measured::KinetoTrace t = one_gemm("NVIDIA A100-SXM4-80GB");
  measured::IterationSet set = measured::find_iterations(t);
  ReplayResult r = replay_iteration(t, set, 0, "", "", "single-node");
  EXPECT_EQ(r.measured_on, "a100-sxm-80gb");
  EXPECT_EQ(r.hardware, "a100-sxm-80gb");
  EXPECT_FALSE(r.moved.has_value());
  EXPECT_NEAR(r.measured_s, 1100e-6, 1e-12);
  EXPECT_NEAR(r.replayed_s, r.measured_s, 1e-8);
  // The GEMM starts at its launch (10 us), not 10 us later as measured: the launch latency is
  // not replayed.
  EXPECT_NEAR(r.measured_gpu_end_s, 1020e-6, 1e-12);
  EXPECT_NEAR(r.replayed_gpu_end_s, 1010e-6, 1e-9);
  EXPECT_EQ(r.stats.gpu_nodes, 1U);
}

TEST(ReplayIteration, MovedToAnotherProfile) {
  measured::KinetoTrace t = one_gemm("NVIDIA A100-SXM4-80GB");
  measured::IterationSet set = measured::find_iterations(t);
  ReplayResult r = replay_iteration(t, set, 0, "h100-sxm", "", "single-node");
  ASSERT_TRUE(r.moved.has_value());
  EXPECT_EQ(r.moved->gemm_nodes, 1U);
  EXPECT_EQ(r.hardware, "h100-sxm");
  EXPECT_LT(r.replayed_gpu_end_s, r.measured_gpu_end_s);  // the GEMM runs faster on H100
}

TEST(ReplayIteration, UnknownMeasuredHardwareIsBadInput) {
  measured::KinetoTrace t = one_gemm("Some GPU");
  measured::IterationSet set = measured::find_iterations(t);
  std::string e =
      testing::error_of([&] { (void)replay_iteration(t, set, 0, "h100-sxm", "", "single-node"); });
  EXPECT_NE(e.find("--measured-on"), std::string::npos) << e;
  // Told, it moves.
  EXPECT_TRUE(replay_iteration(t, set, 0, "h100-sxm", "a100-sxm-80gb", "single-node").moved);
}

}  // namespace
}  // namespace tessera::experiments
