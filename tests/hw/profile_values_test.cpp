// SPDX-License-Identifier: Apache-2.0
// The H200, H800, B200 and GB200 profiles against their spec sheets (docs/hardware.md §1):
// each test states the figure it checks, so a typo in a profile fails here, not in a golden.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "hwprofiles/hw_profile.h"

namespace tessera::hw {
namespace {

using base::DType;

// Every NVIDIA part with FP8 tensor cores runs dense FP8 at twice its dense BF16 rate.
TEST(ProfileValues, Fp8IsTwiceBf16OnEveryFp8Part) {
  for (const char* name : {"h100-sxm", "h200-sxm", "h800-sxm", "b200", "gb200", "b300", "gb300"}) {
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

// Blackwell Ultra extends Blackwell: the same BF16/FP8 tensor-core rates, more memory, an
// 800 Gb/s NIC per GPU; the 96 GB H100 is an H100 with slower HBM2e.
TEST(ProfileValues, ProfilesThatExtendAnother) {
  const Profile b200 = load_profile("b200");
  const Profile b300 = load_profile("b300");
  EXPECT_EQ(b300.ancestors, std::vector<std::string>{"b200"});
  EXPECT_DOUBLE_EQ(b300.peak(DType::kBF16), b200.peak(DType::kBF16));
  EXPECT_DOUBLE_EQ(b300.hbm_capacity, 270e9);
  EXPECT_DOUBLE_EQ(b300.scale_out.bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(b300.gemm.sustained_bf16, 1769e12);
  const Profile gb300 = load_profile("gb300");
  EXPECT_EQ(gb300.ancestors, std::vector<std::string>{"gb200"});
  EXPECT_EQ(gb300.devices_per_node, 72);
  EXPECT_DOUBLE_EQ(gb300.power.tdp, 1400.0);
  const Profile h96 = load_profile("h100-sxm-96gb");
  EXPECT_EQ(h96.ancestors, std::vector<std::string>{"h100-sxm"});
  EXPECT_DOUBLE_EQ(h96.hbm_bandwidth, 2.4e12);
  EXPECT_DOUBLE_EQ(h96.peak(DType::kBF16), load_profile("h100-sxm").peak(DType::kBF16));
  EXPECT_EQ(profile_for_device("H100 SXM with 96GB HBM2e (2.4 TB/s), 500 W power cap"),
            "h100-sxm-96gb");
  EXPECT_EQ(profile_for_device("DGX-B300 (8x B300 270GB HBM3e)"), "b300");
  EXPECT_EQ(profile_for_device("GB300 NVL72 (B300 GPUs in GB300 superchips)"), "gb300");
}

// A power cap below the TDP slows the math clocks by ((cap - idle) / (tdp - idle))^exponent.
TEST(ProfileValues, PowerCapSlowsTheClocks) {
  Profile p = load_profile("h100-sxm");
  EXPECT_DOUBLE_EQ(p.power.clock_scale(), 1.0);
  p.power.limit = 500.0;
  EXPECT_NEAR(p.power.clock_scale(), std::pow(430.0 / 630.0, 0.9), 1e-12);
  p.power.limit = 800.0;
  EXPECT_DOUBLE_EQ(p.power.clock_scale(), 1.0);
}

// A kernel at activity a draws idle + (tdp - idle) x a at full clocks: a cap slows it by
// min(1, ((cap - idle) / ((tdp - idle) x a))^exponent).
TEST(ProfileValues, PowerCapSlowsALessActiveKernelLess) {
  Profile p = load_profile("h100-sxm");
  p.power.limit = 500.0;
  EXPECT_NEAR(p.power.clock_scale(0.8), std::pow(430.0 / (630.0 * 0.8), 0.9), 1e-12);
  EXPECT_DOUBLE_EQ(p.power.clock_scale(0.4), 1.0);            // 70 + 252 W: under the cap
  EXPECT_DOUBLE_EQ(p.power.clock_scale(430.0 / 630.0), 1.0);  // exactly at the cap
  EXPECT_DOUBLE_EQ(p.power.clock_scale(0.0), 1.0);
  p.power.limit = 0.0;
  EXPECT_DOUBLE_EQ(p.power.clock_scale(0.8), 1.0);
}

TEST(ProfileValues, B200SpecSheet) {
  Profile p = load_profile("b200");
  EXPECT_DOUBLE_EQ(p.peak(DType::kBF16), 2250e12);
  EXPECT_DOUBLE_EQ(p.peak(DType::kFP8), 4500e12);
  EXPECT_DOUBLE_EQ(p.hbm_capacity, 180e9);
  EXPECT_DOUBLE_EQ(p.hbm_bandwidth, 8e12);
  EXPECT_DOUBLE_EQ(p.scale_up.bandwidth, 18 * 50e9);  // NVLink5, per direction
  EXPECT_EQ(p.gemm.compute_units, 148);
  // Ring all-reduce busbw 682 GB/s on 8x B200 (stas-nvls-gain-vs-gpu-count) within 1%: 14
  // sending steps at the link's achieved rate and a local last step (a copy: 2 bytes of HBM
  // traffic per byte) per loop (docs/collectives.md section 1).
  const double link = p.scale_up.bandwidth * p.scale_up.efficiency;
  const double local = 2.0 * link / (p.hbm_bandwidth * p.hbm_efficiency);
  EXPECT_NEAR(link * 14.0 / (14.0 + local), 682.2e9, 7e9);
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

// The MAMF best-shape ceilings of these profiles are reproduced through the GEMM model in
// tests/experiments/microbench_repro_test.cpp (the GEMM fits).

}  // namespace
}  // namespace tessera::hw
