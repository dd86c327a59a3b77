// SPDX-License-Identifier: Apache-2.0
// The shipped profiles' kernel models against the microbenchmark rows they are calibrated on
// (calibration/microbench/fits.yaml): every row printed with its error; every 4th row of a
// table is held out of every fit and its mean |error| is asserted.
#include <gtest/gtest.h>

#include "experiments/calibrate/microbench.h"

namespace tessera::experiments::calibrate {
namespace {

const std::string kFits = std::string(TESSERA_SOURCE_DIR) + "/calibration/microbench/fits.yaml";

struct Bound {
  const char* fit;
  double held_out;  // mean |error| of the held-out rows at most
  double fitted;    // mean |error| of the fitted rows at most
};

// The shipped profile on its fits' rows, no fitting: each fit's errors within its bounds.
void reproduce(const std::string& profile, const std::vector<Bound>& bounds) {
  const hw::Profile p = hw::load_profile(profile);
  const std::vector<MicrobenchFit> fits = read_microbench_fits(kFits, p.name, p.ancestors);
  MicrobenchCalibration c{p.name, fits.front().profile, p, {}};
  for (const MicrobenchFit& f : fits) {
    FitOutcome o{f.name, {}, {}, 0};
    for (const Measurement& m : f.rows) {
      const double rate = predict(p, m);
      o.rows.push_back({m, rate, rate});
    }
    c.fits.push_back(std::move(o));
  }
  std::cout << microbench_report(c);
  ASSERT_EQ(c.fits.size(), bounds.size()) << profile;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    ASSERT_EQ(c.fits[i].name, bounds[i].fit);
    const RowErrors e = row_errors(c.fits[i].rows, false);
    EXPECT_LE(e.held_mean, bounds[i].held_out) << profile << ": " << bounds[i].fit;
    EXPECT_LE(e.fit_mean, bounds[i].fitted) << profile << ": " << bounds[i].fit;
  }
}

TEST(MicrobenchRepro, H100) {
  reproduce("h100-sxm", {{"memory-bound kernels", 0.10, 0.10},
                         {"bf16 GEMM", 0.10, 0.10},
                         // DeepGEMM M = 4096 on H800 and the MAMF best shape.
                         {"fp8 GEMM", 0.15, 0.12},
                         {"fused attention", 0.10, 0.10}});
}

TEST(MicrobenchRepro, H800) {
  reproduce("h800-sxm", {{"fp8 GEMM", 0.10, 0.10}});
}

TEST(MicrobenchRepro, H200) {
  reproduce("h200-sxm", {{"memory-bound kernels", 0.10, 0.10},
                         {"fused attention", 0.10, 0.10},
                         {"bf16 GEMM (check)", 0.0, 0.06}});
}

TEST(MicrobenchRepro, A100) {
  reproduce("a100-sxm-80gb", {{"memory-bound kernels", 0.10, 0.10},
                              {"bf16 GEMM", 0.0, 0.06},
                              {"fused attention", 0.10, 0.10}});
}

// 15% for B200's memory and attention: its norms table is GB200's, whose 128-wide rows are
// bound by per-row reductions, not by streaming; its attention table ran at free clocks, is
// causal only, and falls past 32k, which no ramp follows.
TEST(MicrobenchRepro, B200) {
  reproduce("b200", {{"memory-bound kernels", 0.15, 0.10},
                     {"bf16 GEMM", 0.10, 0.10},
                     {"fp8 GEMM", 0.0, 0.06},
                     {"fused attention", 0.15, 0.10}});
}

TEST(MicrobenchRepro, Gb200) {
  reproduce(
      "gb200",
      {{"memory-bound kernels", 0.15, 0.10}, {"GEMM", 0.0, 0.06}, {"fused attention", 0.10, 0.10}});
}

TEST(MicrobenchRepro, Ascend910b) {
  reproduce("ascend-910b", {{"bf16 GEMM", 0.10, 0.10}});
}

// A profile that extends a shipped one takes its fits.
TEST(MicrobenchRepro, AnExtendingProfileTakesItsBasesFits) {
  const hw::Profile p = hw::load_profile("h100-sxm-96gb");
  EXPECT_EQ(read_microbench_fits(kFits, p.name, p.ancestors).size(), 4u);
}

}  // namespace
}  // namespace tessera::experiments::calibrate
