// SPDX-License-Identifier: Apache-2.0
// The GEMM model against the published GEMM tables (calibration/microbench/gemm.yaml): every
// row printed with its error; every 4th row of a table (held_out()) was left out of the fit
// (calibration/fit/fit_compute.py) and its mean |error| is asserted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "hwprofiles/gemm_model.h"
#include "hwprofiles/hw_profile.h"
#include "hwprofiles/memory_model.h"
#include "tests/hw/microbench.h"

namespace tessera::hw {
namespace {

using base::DType;
using testing::held_out;
using testing::ReproRow;

// TFLOP/s the model predicts for `s` in dtype `in` (bf16 output), as the simulator times a
// GEMM node: peak x fraction, A+B+C bytes at the plateau HBM rate, the sustained ceiling.
double predicted_tflops(const Profile& p, const GemmShape& s, DType in) {
  double bytes = gemm_bytes(s, in, DType::kBF16);
  double seconds = gemm_seconds(p.gemm, s, p.peak(in) * p.gemm.fraction(in), bytes,
                                memory_rate(p, bytes, false), {}, p.gemm.sustained(in));
  return 2.0 * static_cast<double>(s.m * s.n) * s.k * s.batch / seconds / 1e12;
}

std::string shape_label(const GemmShape& s) {
  return fmt::format("{}x{}x{}x{}", s.batch, s.m, s.n, s.k);
}

void xla_grid(const std::string& profile, const std::string& id) {
  Profile p = load_profile(profile);
  testing::MicrobenchTable t = testing::load_microbench("gemm.yaml", id);
  std::vector<ReproRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    GemmShape s{static_cast<std::int64_t>(t.num(i, "m")), static_cast<std::int64_t>(t.num(i, "n")),
                static_cast<std::int64_t>(t.num(i, "k")), static_cast<std::int64_t>(t.num(i, "b"))};
    rows.push_back({shape_label(s), t.num(i, "bf16_tflops"), predicted_tflops(p, s, DType::kBF16),
                    held_out(i)});
  }
  testing::ReproScore score = testing::report(id + " bf16 on " + profile, "TFLOP/s", rows);
  EXPECT_EQ(score.held_out_rows, 93);
  EXPECT_LE(score.mean_held_out, 0.10);
}

TEST(GemmRepro, H100XlaGridBf16) {
  xla_grid("h100-sxm", "xla-perf-table-h100-gemm");
}

TEST(GemmRepro, B200XlaGridBf16) {
  xla_grid("b200", "xla-perf-table-b200-gemm");
}

// Best-shape ceilings (scalar entries): the fits used them, so this checks the fraction.
TEST(GemmRepro, BestShapeCeilings) {
  struct Case {
    const char* profile;
    const char* id;
    GemmShape shape;  // from the entry, or as its note says (8192^3)
    DType dtype;
  };
  const Case cases[] = {
      {"h100-sxm", "mamf-h100_sxm-bf16", {2048, 2048, 13312, 1}, DType::kBF16},
      {"h200-sxm",
       "mamf-h100_sxm-bf16",
       {2048, 2048, 13312, 1},
       DType::kBF16},  // "H200 is the same"
      {"a100-sxm-80gb", "mamf-a100_sxm-bf16", {1024, 10240, 5120, 1}, DType::kBF16},
      {"a100-sxm-80gb", "flagperf-a100-40gb-bf16-gemm", {8192, 8192, 8192, 1}, DType::kBF16},
      {"b200", "mamf-b200_sxm-bf16", {1792, 16128, 3072, 1}, DType::kBF16},
      {"gb200", "mamf-gb200_sxm-bf16", {4096, 9728, 2048, 1}, DType::kBF16},
      {"h100-sxm", "mamf-h100_sxm-fp8", {1024, 9216, 14336, 1}, DType::kFP8},
      {"b200", "mamf-b200_sxm-fp8", {15360, 4096, 3072, 1}, DType::kFP8},
      {"gb200", "mamf-gb200_sxm-fp8", {19456, 5120, 1536, 1}, DType::kFP8},
  };
  std::vector<ReproRow> rows;
  for (const Case& c : cases) {
    YAML::Node e = testing::load_microbench_entry("gemm.yaml", c.id);
    rows.push_back({fmt::format("{} {}", c.profile, c.id), e["value"].as<double>(),
                    predicted_tflops(load_profile(c.profile), c.shape, c.dtype), false});
  }
  // Known gap, printed, not asserted: the Hopper FP8 best shapes (mamf-h100_sxm-fp8 above,
  // mamf-h200_sxm-fp8 here) come out 26-33% slow. Their tile counts (288 and 160 tiles of
  // 128x256 on 132 SMs) quantize badly into waves, which cuBLAS's persistent stream-K kernels
  // avoid; the model has no stream-K candidate yet (with one, 1038 -> 1220 TFLOP/s on the
  // H100 row, the bf16 grid fit unchanged).
  rows.push_back(
      {"h200-sxm mamf-h200_sxm-fp8 (gap)",
       testing::load_microbench_entry("gemm.yaml", "mamf-h200_sxm-fp8")["value"].as<double>(),
       predicted_tflops(load_profile("h200-sxm"), {1280, 4096, 12032, 1}, DType::kFP8), true});
  testing::ReproScore score = testing::report("best-shape ceilings", "TFLOP/s", rows);
  EXPECT_LE(score.mean_fit, 0.06);
}

// FP8 on Hopper: DeepGEMM on H800 (the H100's SMs and clocks). M = 4096 rows are compute
// bound and calibrate gemm.max_fraction.fp8; the M = 64/128 rows are HBM bound and printed
// for information: DeepGEMM's JIT persistent kernels have less fixed cost than the cuBLAS
// latency of the bf16 grid, so the model is slow there (asserted only to stay within 45%).
TEST(GemmRepro, H100Fp8DeepGemm) {
  Profile p = load_profile("h100-sxm");
  testing::MicrobenchTable t = testing::load_microbench("gemm.yaml", "deepgemm-h800-fp8-dense");
  std::vector<ReproRow> bound;
  std::vector<ReproRow> small;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    GemmShape s{static_cast<std::int64_t>(t.num(i, "M")), static_cast<std::int64_t>(t.num(i, "N")),
                static_cast<std::int64_t>(t.num(i, "K")), 1};
    ReproRow r{shape_label(s), t.num(i, "tflops"), predicted_tflops(p, s, DType::kFP8),
               held_out(i)};
    (s.m >= 4096 ? bound : small).push_back(r);
  }
  testing::ReproScore score =
      testing::report("deepgemm-h800-fp8-dense, M = 4096, on h100-sxm", "TFLOP/s", bound);
  EXPECT_LE(score.mean_held_out, 0.10);
  testing::ReproScore info =
      testing::report("deepgemm-h800-fp8-dense, M = 64/128 (not fitted)", "TFLOP/s", small);
  EXPECT_LE(std::max(info.max_held_out, info.mean_fit), 0.45);
}

// Ascend 910B2: a community square-GEMM run (host-timed; N = 1024 is mostly launch + sync
// and left out of the fit and of this check).
TEST(GemmRepro, Ascend910bSquare) {
  Profile p = load_profile("ascend-910b");
  testing::MicrobenchTable t =
      testing::load_microbench("gemm.yaml", "community-square-mm-ascend-910b2");
  std::vector<ReproRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    auto n = static_cast<std::int64_t>(t.num(i, "N"));
    if (n < 2048) {
      continue;
    }
    GemmShape s{n, n, n, 1};
    rows.push_back(
        {shape_label(s), t.num(i, "bf16"), predicted_tflops(p, s, DType::kBF16), held_out(i)});
  }
  testing::ReproScore score =
      testing::report("community-square-mm-ascend-910b2 on ascend-910b", "TFLOP/s", rows);
  EXPECT_LE(score.mean_held_out, 0.10);
}

}  // namespace
}  // namespace tessera::hw
