// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/gemm_model.h"

#include <gtest/gtest.h>

namespace tessera::hw {
namespace {

using base::DType;

double achieved_tflops(const std::string& profile, std::int64_t m, std::int64_t n, std::int64_t k) {
  Profile p = load_profile(profile);
  return gemm_efficiency(p.gemm, m, n, k, 1) * p.peak(DType::kBF16) / 1e12;
}

TEST(GemmModel, ClosedFormWithTileWaveAndFillTerms) {
  GemmModel g{128, 256, 4, 0.8, 64.0};
  // 200x300: 2x2 tiles padded to 256x512; 4 tiles = one full wave; k = k_half.
  double tile_eff = (200.0 * 300.0) / (256.0 * 512.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(g, 200, 300, 64, 1), 0.8 * tile_eff * 1.0 * 0.5);
  // 5 tiles on 4 units: two waves, the second 1/4 full.
  EXPECT_DOUBLE_EQ(gemm_efficiency(g, 640, 256, 64, 1), 0.8 * (5.0 / 8.0) * 0.5);
  // batch multiplies the tile count: 3 x 1 tile = 3 of 4 units busy.
  EXPECT_DOUBLE_EQ(gemm_efficiency(g, 128, 256, 64, 3), 0.8 * 0.75 * 0.5);
}

TEST(GemmModel, ReproducesTheCalibrationGemms) {
  // hwprofiles/*.yaml calibrate max_fraction on bf16 8192^3; see the comments there.
  EXPECT_NEAR(achieved_tflops("h100-sxm", 8192, 8192, 8192), 790.0, 7.9);
  EXPECT_NEAR(achieved_tflops("a100-sxm-80gb", 8192, 8192, 8192), 267.9, 2.7);
  EXPECT_NEAR(achieved_tflops("ascend-910b", 8192, 8192, 8192), 328.0, 3.3);
}

TEST(GemmModel, H100LargeGemmIsAboutEightyPercentOfPeak) {
  Profile p = load_profile("h100-sxm");
  double eff = gemm_efficiency(p.gemm, 8192, 8192, 8192, 1);
  EXPECT_NEAR(eff, 790.0 / 989.4, 0.01 * 790.0 / 989.4);
}

TEST(GemmModel, OneTileLeavesTheDeviceIdle) {
  Profile p = load_profile("h100-sxm");
  double eff = gemm_efficiency(p.gemm, 128, 256, 8192, 1);
  EXPECT_LT(eff, 0.01);  // one of 132 SMs busy
  EXPECT_NEAR(eff, p.gemm.max_fraction / 132.0 * (8192.0 / 8320.0), 1e-12);
}

TEST(GemmModel, ThinKAndRaggedShapesCostEfficiency) {
  Profile p = load_profile("h100-sxm");
  double square = gemm_efficiency(p.gemm, 8192, 8192, 8192, 1);
  EXPECT_LT(gemm_efficiency(p.gemm, 8192, 8192, 128, 1), 0.55 * square);
  // One row/column past a tile boundary: padded tiles and a ragged extra wave.
  EXPECT_LT(gemm_efficiency(p.gemm, 4097, 4097, 4096, 1),
            0.9 * gemm_efficiency(p.gemm, 4096, 4096, 4096, 1));
  double prev = 0.0;
  for (std::int64_t k = 16; k <= 65536; k *= 2) {
    double eff = gemm_efficiency(p.gemm, 4096, 4096, k, 1);
    EXPECT_GT(eff, prev);
    prev = eff;
  }
}

TEST(GemmModel, RejectsEmptyShapes) {
  GemmModel g;
  EXPECT_THROW((void)gemm_efficiency(g, 0, 1, 1, 1), base::InternalError);
  EXPECT_THROW((void)gemm_efficiency(g, 1, 1, 1, 0), base::InternalError);
}

}  // namespace
}  // namespace tessera::hw
