// SPDX-License-Identifier: Apache-2.0
// The H200, H800, B200 and GB200 profiles against their spec sheets (docs/hardware.md §1):
// each test states the figure it checks, so a typo in a profile fails here, not in a golden.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hwprofiles/hw_profile.h"

namespace tessera::hw {
namespace {

using base::DType;

// Every NVIDIA part with FP8 tensor cores runs dense FP8 at twice its dense BF16 rate.
TEST(ProfileValues, Fp8IsTwiceBf16OnEveryFp8Part) {
  for (const char* name : {"h100-sxm", "h200-sxm", "h800-sxm", "b200", "gb200"}) {
    SCOPED_TRACE(name);
    Profile p = load_profile(name);
    EXPECT_NEAR(p.peak(DType::kFP8) / p.peak(DType::kBF16), 2.0, 1e-3);
    EXPECT_DOUBLE_EQ(p.peak(DType::kFP16), p.peak(DType::kBF16));
  }
}

TEST(ProfileValues, H200IsH100SiliconWithMoreFasterMemory) {
  Profile h100 = load_profile("h100-sxm");
  Profile h200 = load_profile("h200-sxm");
  EXPECT_DOUBLE_EQ(h200.peak(DType::kBF16), h100.peak(DType::kBF16));
  EXPECT_EQ(h200.gemm.compute_units, h100.gemm.compute_units);
  EXPECT_DOUBLE_EQ(h200.gemm.max_fraction, h100.gemm.max_fraction);
  EXPECT_DOUBLE_EQ(h200.hbm_capacity, 141e9);
  EXPECT_DOUBLE_EQ(h200.hbm_bandwidth, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.scale_up.bandwidth, h100.scale_up.bandwidth);
  // The calibrated streaming fraction stays inside what gpu-benches measured on H200
  // (triad 3.53 TB/s .. init 3.88 TB/s).
  EXPECT_GE(h200.hbm_bandwidth * h200.hbm_efficiency, 3.53e12);
  EXPECT_LE(h200.hbm_bandwidth * h200.hbm_efficiency, 3.88e12);
}

TEST(ProfileValues, H800HasH100ComputeAndEightNvlinks) {
  Profile h100 = load_profile("h100-sxm");
  Profile h800 = load_profile("h800-sxm");
  EXPECT_DOUBLE_EQ(h800.peak(DType::kBF16), h100.peak(DType::kBF16));
  EXPECT_DOUBLE_EQ(h800.peak(DType::kFP8), h100.peak(DType::kFP8));
  EXPECT_DOUBLE_EQ(h800.hbm_bandwidth, h100.hbm_bandwidth);
  EXPECT_DOUBLE_EQ(h800.scale_up.bandwidth, 8 * 25e9);  // 8 NVLink4 links, per direction
  // DeepSeek's measured ~160 GB/s of the 200.
  EXPECT_NEAR(h800.scale_up.bandwidth * h800.scale_up.efficiency, 160e9, 1e9);
  EXPECT_DOUBLE_EQ(h800.scale_out.bandwidth, 50e9);  // one 400 Gb/s CX7 per GPU
}

TEST(ProfileValues, B200SpecSheet) {
  Profile p = load_profile("b200");
  EXPECT_DOUBLE_EQ(p.peak(DType::kBF16), 2250e12);
  EXPECT_DOUBLE_EQ(p.peak(DType::kFP8), 4500e12);
  EXPECT_DOUBLE_EQ(p.hbm_capacity, 180e9);
  EXPECT_DOUBLE_EQ(p.hbm_bandwidth, 8e12);
  EXPECT_DOUBLE_EQ(p.scale_up.bandwidth, 18 * 50e9);  // NVLink5, per direction
  EXPECT_EQ(p.gemm.compute_units, 148);
  // Ring busbw 682 GB/s on 8x B200 (stas-nvls-gain-vs-gpu-count) within 1%.
  EXPECT_NEAR(p.scale_up.bandwidth * p.scale_up.efficiency, 682.2e9, 7e9);
}

TEST(ProfileValues, Gb200IsAFasterB200InOneRack) {
  Profile b200 = load_profile("b200");
  Profile gb200 = load_profile("gb200");
  EXPECT_DOUBLE_EQ(gb200.peak(DType::kBF16), 2500e12);
  EXPECT_GT(gb200.peak(DType::kBF16), b200.peak(DType::kBF16));
  EXPECT_DOUBLE_EQ(gb200.hbm_bandwidth, b200.hbm_bandwidth);
  EXPECT_DOUBLE_EQ(gb200.hbm_capacity, 186e9);
  EXPECT_EQ(gb200.gemm.compute_units, b200.gemm.compute_units);
  EXPECT_DOUBLE_EQ(gb200.scale_up.bandwidth, b200.scale_up.bandwidth);
  EXPECT_EQ(gb200.devices_per_node, 72);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The tile x wave x fill factor of hwprofiles/gemm_model.h for a shape, written out here (not
// called) so that the check below stays the profile comment's own arithmetic.
double shape_factor(const GemmModel& g, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::int64_t tm = ceil_div(m, g.tile_m);
  std::int64_t tn = ceil_div(n, g.tile_n);
  double tile = static_cast<double>(m * n) / static_cast<double>(tm * g.tile_m * tn * g.tile_n);
  double wave = static_cast<double>(tm * tn) /
                static_cast<double>(ceil_div(tm * tn, g.compute_units) * g.compute_units);
  return tile * wave * static_cast<double>(k) / (static_cast<double>(k) + g.k_half);
}

// max_fraction reproduces the MAMF best shape it was calibrated on (gemm.yaml
// mamf-b200_sxm-bf16, mamf-gb200_sxm-bf16, mamf-h100_sxm-bf16 "H200 is the same") within 1%.
TEST(ProfileValues, GemmCeilingsReproduceTheirMamfRows) {
  struct Row {
    const char* profile;
    std::int64_t m, n, k;
    double tflops;
  };
  for (const Row& r :
       {Row{"b200", 1792, 16128, 3072, 1745.0}, Row{"gb200", 4096, 9728, 2048, 1822.0},
        Row{"h200-sxm", 2048, 2048, 13312, 794.5}}) {
    SCOPED_TRACE(r.profile);
    Profile p = load_profile(r.profile);
    double predicted =
        p.gemm.max_fraction * shape_factor(p.gemm, r.m, r.n, r.k) * p.peak(DType::kBF16) / 1e12;
    EXPECT_NEAR(predicted, r.tflops, 0.01 * r.tflops);
  }
}

}  // namespace
}  // namespace tessera::hw
