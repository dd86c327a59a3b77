// SPDX-License-Identifier: Apache-2.0
// `compare --sweep`: the argument, bad values as bad input, invalid scenarios as points that
// cannot run, and one row per schedule per value.
#include "experiments/sweep.h"

#include <gtest/gtest.h>

#include "tests/input_error.h"

namespace tessera::experiments {
namespace {

using testing::error_of;

SweepRequest tiny(const std::string& sweep, const std::string& schedules = "1f1b,gpipe") {
  return {.scenario = std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml",
          .sets = {},
          .sweep = sweep,
          .schedules = schedules};
}

void ignore(const SweepPoint& /*p*/, const std::string& /*spec*/, const Outcome& /*o*/) {}

TEST(SweepArg, KeyAndValues) {
  Sweep sw = parse_sweep(" model.layers = 4, 8 ");
  EXPECT_EQ(sw.key, "model.layers");
  EXPECT_EQ(sw.values, (std::vector<std::string>{"4", "8"}));
}

TEST(SweepArg, MalformedIsBadInput) {
  for (const char* bad : {"model.layers", "model.layers=", "model.layers=4,,8", "=4",
                          "model..layers=4", "model.layers=4,4"}) {
    EXPECT_NE(error_of([&] { parse_sweep(bad); }).find("--sweep"), std::string::npos) << bad;
  }
}

TEST(RunSweep, OneRowPerScheduleAndValue) {
  int runs = 0;
  SweepResult res = run_sweep(tiny("model.layers=2,4"), [&](const SweepPoint&, const std::string&,
                                                            const Outcome&) { ++runs; });
  EXPECT_EQ(res.name, "tiny");
  EXPECT_EQ(res.labels, (std::vector<std::string>{"1f1b", "gpipe"}));
  ASSERT_EQ(res.points.size(), 2U);
  EXPECT_EQ(runs, 4);
  for (const SweepPoint& p : res.points) {
    ASSERT_EQ(p.rows.size(), 2U);
    EXPECT_DOUBLE_EQ(p.rows[0].speedup, 1.0);
    EXPECT_TRUE(has_speedup(p, 1));
  }
  EXPECT_LT(res.points[0].rows[0].step_s, res.points[1].rows[0].step_s);
}

// pp=2 does not divide 3 layers: the scenario is invalid there, a point that cannot run.
TEST(RunSweep, InvalidScenarioIsAPointThatCannotRun) {
  SweepResult res = run_sweep(tiny("model.layers=3,4"), ignore);
  EXPECT_FALSE(res.points[0].skipped.empty());
  EXPECT_TRUE(res.points[0].rows.empty());
  EXPECT_TRUE(res.points[1].skipped.empty());
}

// A value that is not valid input stops before anything runs, naming --sweep and the value,
// with the loader's did-you-mean.
TEST(RunSweep, BadValueIsBadInput) {
  int runs = 0;
  std::string e = error_of([&] {
    run_sweep(tiny("training.recompute=none,fulll"),
              [&](const SweepPoint&, const std::string&, const Outcome&) { ++runs; });
  });
  EXPECT_NE(e.find("--sweep training.recompute=none,fulll"), std::string::npos) << e;
  EXPECT_NE(e.find("value 'fulll'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'full'"), std::string::npos) << e;
  EXPECT_EQ(runs, 0);
}

// Values that read but make the scenario invalid, even where the loader blames the swept key
// itself (global_batch not divisible by dp), are points that cannot run; values the reader
// rejects (out of range, not a number) are bad input.
TEST(RunSweep, InvalidAtTheSweptKeyIsStillAPoint) {
  SweepResult res = run_sweep(tiny("training.global_batch=5,8"), ignore);
  EXPECT_NE(res.points[0].skipped.find("not divisible"), std::string::npos)
      << res.points[0].skipped;
  EXPECT_TRUE(res.points[1].skipped.empty());
  for (const char* bad : {"model.layers=4,0", "model.layers=4,many"}) {
    std::string e = error_of([&] { run_sweep(tiny(bad), ignore); });
    EXPECT_NE(e.find(std::string("--sweep ") + bad), std::string::npos) << e;
  }
}

TEST(RunSweep, MisspeltKeyIsBadInput) {
  std::string e = error_of([] { run_sweep(tiny("model.layrs=2,4"), ignore); });
  EXPECT_NE(e.find("--sweep model.layrs=2,4"), std::string::npos) << e;
}

TEST(RunSweep, BadScheduleIsBadInputBeforeAnyRun) {
  std::string e = error_of([] { run_sweep(tiny("model.layers=2,4", "1f1b,gpip"), ignore); });
  EXPECT_NE(e.find("unknown schedule 'gpip'"), std::string::npos) << e;
}

// The exposed encoder at each value is measured against the LLM alone at that value (not at
// the first one).
TEST(RunSweep, ExposedEncoderPerValue) {
  SweepRequest req{.scenario = std::string(TESSERA_SOURCE_DIR) + "/scenarios/qwen2vl-7b-910c.yaml",
                   .sets = {},
                   .sweep = "model.layers=28,32",
                   .schedules = "1f1b"};
  SweepResult res = run_sweep(req, ignore);
  ASSERT_EQ(res.points.size(), 2U);
  synth::Scenario llm = synth::load_scenario(req.scenario, {"model.layers=32"});
  llm.encoder = synth::EncoderConfig{};
  double llm_s = simulate_scenario(llm, true, false).stats.step_time_s;
  const Row& r = res.points[1].rows[0];
  EXPECT_NEAR(r.exposed_encoder_s, r.step_s - llm_s, 1e-12);
}

}  // namespace
}  // namespace tessera::experiments
