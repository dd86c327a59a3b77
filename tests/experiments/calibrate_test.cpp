// SPDX-License-Identifier: Apache-2.0
// `tessera calibrate` on a synthetic corpus: runs "measured" by Tessera itself on a profile
// with known changes, calibrated from the unchanged profile, give the changes back; and what
// it refuses, at the input's place.
#include "experiments/calibrate/calibrate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "experiments/calibrate/fit.h"
#include "experiments/pipeline.h"
#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::experiments::calibrate {
namespace {

using testing::error_of;
using testing::TempDir;

const std::string kTiny = std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml";

// Runs of the tiny scenario that lean on different parameters: launch-bound as it is, math-
// bound at 4096 wide, more microbatches, data-parallel only, and attention-bound at 32K-64K
// tokens.
const std::vector<std::string> kSets = {
    "",
    "model.hidden=4096;model.heads=32;model.ffn=16384;training.seq_len=4096",
    "model.hidden=2048;model.heads=16;model.ffn=8192;training.global_batch=32",
    "parallelism.tp=1;parallelism.dp=4;model.hidden=3072;model.heads=24;model.ffn=12288",
    "training.global_batch=64",
    "model.hidden=1024;model.heads=8;model.ffn=4096;training.seq_len=65536",
    "model.hidden=2048;model.heads=16;model.ffn=8192;training.seq_len=32768",
};

// A CSV of those runs with the step times `truth` gives.
std::string measured_on(const TempDir& dir, const hw::Profile& truth) {
  std::string csv = "id,scenario,set,step_time_s\n";
  for (std::size_t i = 0; i < kSets.size(); ++i) {
    csv += "r" + std::to_string(i) + "," + kTiny + ",\"" + kSets[i] + "\",1\n";
  }
  runs::RunsFile f = runs::read_runs(dir.write("shape.csv", csv));
  csv = "id,scenario,set,step_time_s\n";
  for (std::size_t i = 0; i < kSets.size(); ++i) {
    synth::Scenario s = *f.runs[i].scenario;
    s.cluster.profile = truth;
    const double t = simulate_scenario(s, RunOptions{}).stats.step_time_s;
    csv += "r" + std::to_string(i) + "," + kTiny + ",\"" + kSets[i] + "\"," +
           fmt::format("{:.17g}", t) + ",own\n";
  }
  return dir.write("runs.csv", csv);
}

TEST(Calibrate, RecoversAKnownPerturbation) {
  TempDir dir;
  const hw::Profile base = hw::load_profile("h100-sxm");
  hw::Profile truth = base;
  truth.under_load.math = 0.8;
  truth.launch.host = base::from_us(20.0);
  truth.under_load.step = base::from_seconds(0.002);
  const runs::RunsFile file = runs::read_runs(measured_on(dir, truth));
  Options opt;
  opt.fit = {"under_load.math", "launch.host", "under_load.step"};
  opt.hold_out = false;
  // The host thread runs ahead of the device until its cost per kernel passes the kernels'
  // own times: from a cost below that, the step times do not move with it, and the fit starts
  // where they do.
  hw::Profile start = base;
  start.launch.host = base::from_us(16.0);
  const Calibration c = calibrate(file, start, opt);
  ASSERT_EQ(c.parameters.size(), 3u);
  EXPECT_NEAR(c.parameters[0].value, 0.8, 0.02 * 0.8) << report(c);
  EXPECT_NEAR(c.parameters[1].value, 20e-6, 0.02 * 20e-6) << report(c);
  EXPECT_NEAR(c.parameters[2].value, 0.002, 0.02 * 0.002) << report(c);
  for (const RunResidual& r : c.runs) {
    EXPECT_NEAR(r.fitted_s / r.measured_s, 1.0, 0.01) << r.run->id;
  }
  // The written profile extends the base and reads back to the fitted values.
  const std::string path =
      dir.write("fitted.yaml", profile_yaml(c, "fitted", dir.path() + "/runs.csv"));
  const hw::Profile back = hw::load_profile(path);
  EXPECT_NEAR(back.under_load.math, c.parameters[0].value, 1e-8);
  EXPECT_DOUBLE_EQ(back.scale_up.bandwidth, base.scale_up.bandwidth);
}

// The GEMMs and the attention kernels are told apart by how much of each run is attention.
TEST(Calibrate, RecoversAttentionApartFromTheOtherMath) {
  TempDir dir;
  hw::Profile truth = hw::load_profile("h100-sxm");
  truth.under_load.math = 0.85;
  truth.under_load.attention = 0.75;
  const runs::RunsFile file = runs::read_runs(measured_on(dir, truth));
  Options opt;
  opt.fit = {"under_load.math", "under_load.attention"};
  opt.hold_out = false;
  // A start of its own, as in HoldsOutByModel: two runs of seven inform the attention value,
  // and against residuals this small the fit's weak prior (docs/calibration.md Part 3) would
  // hold it a few percent towards a far start.
  hw::Profile start = truth;
  start.under_load.math = 0.8;
  start.under_load.attention = 0.85;
  const Calibration c = calibrate(file, start, opt);
  ASSERT_EQ(c.parameters.size(), 2u);
  EXPECT_NEAR(c.parameters[0].value, 0.85, 0.02 * 0.85) << report(c);
  EXPECT_NEAR(c.parameters[1].value, 0.75, 0.02 * 0.75) << report(c);
}

TEST(Calibrate, SameResultForAnyThreadCount) {
  TempDir dir;
  hw::Profile truth = hw::load_profile("h100-sxm");
  truth.under_load.math = 0.9;
  const runs::RunsFile file = runs::read_runs(measured_on(dir, truth));
  Options one;
  one.fit = {"under_load.math"};
  one.hold_out = false;
  one.jobs = 1;
  Options two = one;
  two.jobs = 2;
  const hw::Profile base = hw::load_profile("h100-sxm");
  EXPECT_EQ(profile_yaml(calibrate(file, base, one), "x", "r"),
            profile_yaml(calibrate(file, base, two), "x", "r"));
}

// Runs of one source: each model (by its parameter count) left out in turn instead.
TEST(Calibrate, HoldsOutByModel) {
  TempDir dir;
  hw::Profile truth = hw::load_profile("h100-sxm");
  truth.under_load.math = 0.85;
  const runs::RunsFile file = runs::read_runs(measured_on(dir, truth));
  Options opt;
  opt.fit = {"under_load.math"};
  opt.hold_out_by = Options::HoldOut::kModel;
  // A start of its own, not the shipped value: these small runs inform the value weakly, so
  // a fold's refit (linear about the optimum) stays near the truth only from a near start.
  hw::Profile start = hw::load_profile("h100-sxm");
  start.under_load.math = 0.8;
  const Calibration c = calibrate(file, start, opt);
  EXPECT_EQ(c.held_out_by, "model");
  ASSERT_GE(c.folds.size(), 3u);  // the kSets' four model sizes
  for (const Fold& f : c.folds) {
    EXPECT_NE(f.source.find("B-parameter model"), std::string::npos) << f.source;
    EXPECT_NEAR(f.values[0], 0.85, 0.02) << f.source;
  }
  EXPECT_NE(report(c).find("| model left out |"), std::string::npos);
  // The held-out errors by hardware and precision, all seven runs in one group here.
  EXPECT_NE(report(c).find("| h100-sxm, bf16 | 7 | "), std::string::npos) << report(c);
}

// A profile that extends the base and gives a fitted parameter a value of its own (gb300's
// under_load.math under gb200) does not follow the fit: its runs are left out, saying why; one
// that inherits the value is fitted with the base's runs.
TEST(Calibrate, LeavesOutRunsWhoseProfileSetsTheValueItself) {
  TempDir dir;
  const std::string own =
      dir.write("own.yaml", "name: own\nextends: h100-sxm\nunder_load:\n  math: 0.5\n");
  const std::string same =
      dir.write("same.yaml", "name: same\nextends: h100-sxm\ndescription: \"inherits\"\n");
  const std::string csv =
      "id,scenario,set,step_time_s\n"
      "base," +
      kTiny +
      ",\"\",0.002\n"
      "own," +
      kTiny + ",\"cluster.hardware=" + own +
      "\",0.002\n"
      "same," +
      kTiny + ",\"cluster.hardware=" + same + "\",0.002\n";
  const runs::RunsFile file = runs::read_runs(dir.write("runs.csv", csv));
  Options opt;
  opt.fit = {"under_load.math"};
  opt.hold_out = false;
  const Calibration c = calibrate(file, hw::load_profile("h100-sxm"), opt);
  ASSERT_EQ(c.runs.size(), 2U);
  EXPECT_EQ(c.runs[0].run->id, "base");
  EXPECT_EQ(c.runs[1].run->id, "same");
  ASSERT_EQ(c.left_out.size(), 1U);
  EXPECT_EQ(c.left_out[0], "own: its profile own gives under_load.math a value of its own");
}

TEST(Calibrate, RefusesWhatItCannotFit) {
  TempDir dir;
  const runs::RunsFile file = runs::read_runs(measured_on(dir, hw::load_profile("h100-sxm")));
  Options opt;
  opt.fit = {"gemm.tiles"};
  EXPECT_NE(error_of([&] {
              (void)calibrate(file, hw::load_profile("h100-sxm"), opt);
            }).find("--fit 'gemm.tiles': not a bounded number of the profile parameter table"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              (void)calibrate(file, hw::load_profile("b200"), Options{});
            }).find("no run of"),
            std::string::npos);
}

TEST(Fit, SolvesSmallSystems) {
  std::vector<double> b = {1.0, 2.0};
  std::vector<double> inverse;
  ASSERT_TRUE(solve_spd({4.0, 1.0, 1.0, 3.0}, b, 2, &inverse));
  EXPECT_NEAR(b[0], 1.0 / 11.0, 1e-12);
  EXPECT_NEAR(b[1], 7.0 / 11.0, 1e-12);
  EXPECT_NEAR(inverse[0], 3.0 / 11.0, 1e-12);
  std::vector<double> c = {1.0, 1.0};
  EXPECT_FALSE(solve_spd({1.0, 2.0, 2.0, 1.0}, c, 2));
}

// One offset u fitted to 20 residuals u - 0.5 that agree and 3 that sit 0.4 further off (runs
// with an effect no parameter models): each of the three pulls with r / (1 + (r/c)^2) under
// Cauchy's loss, a sixth of its r / sqrt(1 + (r/c)^2) under soft-L1's (c = 0.1), so the
// redescending fit moves a quarter as far.
TEST(Fit, RedescendingLossIgnoresAFewFarOffRuns) {
  const Residuals f = [](const std::vector<std::vector<double>>& points) {
    std::vector<std::vector<double>> out;
    for (const auto& u : points) {
      std::vector<double> r(20, u[0] - 0.5);
      r.insert(r.end(), 3, u[0] - 0.5 + 0.4);
      out.push_back(r);
    }
    return out;
  };
  FitOptions cauchy;
  cauchy.redescending = true;
  const double redescending = fit(f, {0.5}, cauchy).u[0];
  const double soft_l1 = fit(f, {0.5}, FitOptions{}).u[0];
  EXPECT_NEAR(redescending, 0.5, 0.005);
  EXPECT_LT(soft_l1, 0.5 - 3.0 * (0.5 - redescending));
}

}  // namespace
}  // namespace tessera::experiments::calibrate
