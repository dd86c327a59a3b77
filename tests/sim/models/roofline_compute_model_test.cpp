// SPDX-License-Identifier: Apache-2.0
#include "sim/models/compute/roofline_compute_model.h"

#include <gtest/gtest.h>

#include "hwprofiles/gemm_model.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::models {
namespace {

using base::from_seconds;

graph::Node op(graph::OpClass c, double flops, double bytes) {
  graph::Node n;
  n.op = c;
  n.flops = flops;
  n.bytes = bytes;
  return n;
}

TEST(RooflineComputeModel, FixedDurationWins) {
  hw::Profile p = simtest::test_profile();
  p.kernel_launch = 5000;
  graph::Node n = op(graph::OpClass::kGemm, 1e12, 1e9);
  n.fixed_duration = 1234;
  EXPECT_EQ(RooflineComputeModel(p).duration(n), 1234);
}

TEST(RooflineComputeModel, MemoryBoundOpTakesBytesOverBandwidth) {
  hw::Profile p = simtest::test_profile();
  p.hbm_efficiency = 0.5;
  p.kernel_launch = 3000;
  RooflineComputeModel m(p);
  // 4 GB at 2 TB/s * 0.5 = 4 ms; 1 GFLOP at 50 TFLOP/s vector = 20 us.
  EXPECT_EQ(m.duration(op(graph::OpClass::kElementwise, 1e9, 4e9)), 3000 + from_seconds(4e-3));
  // Math-bound on the vector units when the bytes are few.
  EXPECT_EQ(m.duration(op(graph::OpClass::kNorm, 1e12, 1e3)), 3000 + from_seconds(1e12 / 50e12));
}

TEST(RooflineComputeModel, GemmUsesTheEfficiencyModel) {
  hw::Profile p = simtest::test_profile();
  p.kernel_launch = 1000;
  graph::Node n = op(graph::OpClass::kGemm, 2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 2);
  n.gemm = {4096, 4096, 4096, 1};
  double eff = hw::gemm_efficiency(p.gemm, 4096, 4096, 4096, 1);
  double math = n.flops / (1e15 * eff);
  ASSERT_GT(math, n.bytes / 2e12);  // compute-bound
  EXPECT_EQ(RooflineComputeModel(p).duration(n), 1000 + from_seconds(math));
}

TEST(RooflineComputeModel, AttentionAndDtypeFallbacks) {
  hw::Profile p = simtest::test_profile();
  RooflineComputeModel m(p);
  graph::Node attn = op(graph::OpClass::kAttention, 1e12, 0.0);
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (1e15 * p.attention_fraction)));
  attn.dtype = base::DType::kFP8;
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (2e15 * p.attention_fraction)));
  // fp32 has no matrix peak in this profile and no fp32 peak to fall back to: vector units.
  attn.dtype = base::DType::kFP32;
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (50e12 * p.attention_fraction)));
  p.peak_flops[2] = 60e12;
  EXPECT_EQ(RooflineComputeModel(p).duration(attn),
            from_seconds(1e12 / (60e12 * p.attention_fraction)));
}

}  // namespace
}  // namespace tessera::models
