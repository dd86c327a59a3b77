// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/gemm_model.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tessera::hw {
namespace {

using base::DType;

// 4 units at 1e12 FLOP/s each, no fixed costs: times are FLOPs of whole tiles / 1e12.
GemmModel four_units() {
  GemmModel g;
  g.tiles = {GemmTile{128, 256}};
  g.compute_units = 4;
  g.k_half = 64.0;
  return g;
}

constexpr double kRate = 4e12;
constexpr double kFastHbm = 1e30;  // split-K partial sums for free

double tile_s(double tm, double tn, double depth) {
  return 2.0 * tm * tn * (depth + 64.0) / 1e12;
}

TEST(GemmModel, OneWaveOfPaddedTilesWithKFill) {
  GemmModel g = four_units();
  // 200x300: 2x2 partial tiles do full work; 4 tiles = one wave.
  GemmKernel k = gemm_kernel(g, {200, 300, 64, 1}, kRate, kFastHbm);
  EXPECT_DOUBLE_EQ(k.seconds, tile_s(128, 256, 64));
  EXPECT_EQ(k.split_k, 1);
}

TEST(GemmModel, TheLastWaveLeavesUnitsIdle) {
  GemmModel g = four_units();
  // 5 tiles on 4 units: two waves. batch multiplies the tiles: 3 x 1 = one wave.
  EXPECT_DOUBLE_EQ(gemm_kernel(g, {640, 256, 64, 1}, kRate, kFastHbm).seconds,
                   2 * tile_s(128, 256, 64));
  EXPECT_DOUBLE_EQ(gemm_kernel(g, {128, 256, 64, 3}, kRate, kFastHbm).seconds,
                   tile_s(128, 256, 64));
}

TEST(GemmModel, SplitKFillsIdleUnitsWhenKIsLong) {
  GemmModel g = four_units();
  // One tile, k = 8192: 4 slices of 2048 fill the 4 units in one wave; 8 slices would need
  // two waves of 1024 + 64 (2176 > 2112).
  GemmKernel k = gemm_kernel(g, {128, 256, 8192, 1}, kRate, kFastHbm);
  EXPECT_EQ(k.split_k, 4);
  EXPECT_DOUBLE_EQ(k.seconds, tile_s(128, 256, 2048));
  // The reduction's overhead and partial-sum traffic count: 8 B per output per slice.
  g.split_k_overhead = base::from_us(1.0);
  double hbm = 1e12;
  GemmKernel costly = gemm_kernel(g, {128, 256, 8192, 1}, kRate, hbm);
  EXPECT_EQ(costly.split_k, 4);
  EXPECT_DOUBLE_EQ(costly.seconds, tile_s(128, 256, 2048) + 1e-6 + 8.0 * 128 * 256 * 4 / hbm);
  // Off: the main tile, unsplit.
  GemmKernel main_only = gemm_kernel(g, {128, 256, 8192, 1}, kRate, hbm, {.kernel_choice = false});
  EXPECT_EQ(main_only.split_k, 1);
  EXPECT_DOUBLE_EQ(main_only.seconds, tile_s(128, 256, 8192));
}

TEST(GemmModel, SmallShapesPickSmallTilesAtTheirRate) {
  GemmModel g = four_units();
  g.compute_units = 1;  // splitting cannot help: every slice is another wave
  g.tiles = {GemmTile{128, 256}, GemmTile{64, 64}};
  g.small_tile_exponent = 1.0;  // reuse 32 vs 85.33: the 64x64 tile runs at 0.375
  GemmKernel k = gemm_kernel(g, {64, 64, 4096, 1}, 1e12, kFastHbm);
  EXPECT_EQ(k.tile.m, 64);
  EXPECT_DOUBLE_EQ(k.seconds, tile_s(64, 64, 4096) / 0.375);
}

TEST(GemmModel, LatencyAndTheHbmBound) {
  GemmModel g = four_units();
  g.latency = base::from_us(5.0);
  GemmShape s{128, 256, 64, 1};
  double math = tile_s(128, 256, 64);
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 0.0, 1e12), 5e-6 + math);
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 1e9, 1e12), 5e-6 + 1e-3);  // 1 GB at 1 TB/s
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 0.0, 1e12, {.latency = false}), math);
  // Quantization off: the flat rate.
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 0.0, 1e12, {.quantization = false}),
                   5e-6 + 2.0 * 128 * 256 * 64 / kRate);
}

// The sustained ceiling bounds the whole kernel (latency included), and only where the shape
// model is faster than it.
TEST(GemmModel, SustainedCeilingBoundsTheWholeKernel) {
  GemmModel g = four_units();
  g.latency = base::from_us(5.0);
  GemmShape s{128, 256, 8192, 1};
  const double flops = 2.0 * 128 * 256 * 8192;
  const double model = gemm_seconds(g, s, kRate, 0.0, 1e12);
  const double slow = 0.5 * flops / model;  // half the model's rate: binds
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 0.0, 1e12, {}, slow), flops / slow);
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 0.0, 1e12, {}, 2.0 * flops / model), model);
  EXPECT_DOUBLE_EQ(gemm_seconds(g, s, kRate, 0.0, 1e12, {}, 0.0), model);  // none
  g.sustained_bf16 = 7.0;
  g.sustained_fp8 = 9.0;
  EXPECT_DOUBLE_EQ(g.sustained(DType::kBF16), 7.0);
  EXPECT_DOUBLE_EQ(g.sustained(DType::kFP16), 7.0);
  EXPECT_DOUBLE_EQ(g.sustained(DType::kFP8), 9.0);
  EXPECT_DOUBLE_EQ(g.sustained(DType::kFP32), 0.0);
}

TEST(GemmModel, BytesAndFractionsByDtype) {
  EXPECT_DOUBLE_EQ(gemm_bytes({2, 3, 4, 5}, DType::kFP8, DType::kBF16),
                   5.0 * ((2 * 4 + 4 * 3) * 1 + 2 * 3 * 2));
  GemmModel g;
  g.max_fraction = 0.8;
  g.max_fraction_fp8 = 0.7;
  EXPECT_DOUBLE_EQ(g.fraction(DType::kFP8), 0.7);
  EXPECT_DOUBLE_EQ(g.fraction(DType::kFP32), 0.8);  // 0: as bf16
  EXPECT_DOUBLE_EQ(g.fraction(DType::kFP16), 0.8);
}

TEST(GemmModel, RejectsEmptyShapes) {
  GemmModel g;
  EXPECT_THROW((void)gemm_kernel(g, {0, 1, 1, 1}, 1e12, 1e12), base::InternalError);
  EXPECT_THROW((void)gemm_kernel(g, {1, 1, 1, 0}, 1e12, 1e12), base::InternalError);
  EXPECT_THROW((void)gemm_kernel(g, {1, 1, 1, 1}, 0.0, 1e12), base::InternalError);
}

}  // namespace
}  // namespace tessera::hw
