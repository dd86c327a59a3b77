// SPDX-License-Identifier: Apache-2.0
// Pairs of runs whose scenarios differ in one or two keys, or none (experiments/runs/pairs.h):
// which runs pair, what differs, and the measured and predicted ratios of their step times.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/runs/pairs.h"

namespace tessera::experiments::runs {
namespace {

// A simulated run of the given scenario text, measured and predicted step times.
struct Fixture {
  std::vector<Run> runs;
  std::vector<RunResult> results;

  void add(const std::string& id, const std::string& text, double measured, double predicted,
           bool simulated = true) {
    Run r;
    r.id = id;
    r.scenario_text = "name: \"" + id + "\"\n" + text;
    runs.push_back(r);
    RunResult x;
    x.simulated = simulated;
    x.measured_s = measured;
    x.predicted_s = predicted;
    results.push_back(x);
  }
  std::vector<RunPair> pairs(int most) {
    for (std::size_t i = 0; i < runs.size(); ++i) {
      results[i].run = &runs[i];
    }
    return run_pairs(results, most);
  }
};

const std::string kBase =
    "training:\n  precision: fp8\n  fp8_recipe: tensorwise\n  seq_len: 4096\n"
    "parallelism:\n  tp: 2\n  dp: 4\ncluster:\n  hardware: \"gb200\"\n";

std::string with(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(RunPairs, OneChangeAtATimeWithItsRatios) {
  Fixture f;
  f.add("cs", kBase, 4.0, 4.4);
  f.add("mx", with(kBase, "tensorwise", "mxfp8"), 4.2, 4.4);
  f.add("again", kBase, 5.0, 4.4);  // measured twice
  f.add("far", with(with(kBase, "tp: 2", "tp: 4"), "seq_len: 4096", "seq_len: 8192"), 6, 7);
  f.add("extra", kBase + "schedule: 1f1b\n", 4.0, 4.0);  // a key only it sets
  f.add("skipped", kBase, 1.0, 1.0, false);              // not simulated
  const std::vector<RunPair> p = f.pairs(1);
  ASSERT_EQ(p.size(), 5u);  // cs-mx, cs-again, cs-extra, mx-again, again-extra
  EXPECT_EQ(p[0].first->run->id, "cs");
  EXPECT_EQ(p[0].second->run->id, "mx");
  ASSERT_EQ(p[0].differences.size(), 1u);
  EXPECT_EQ(p[0].differences[0].key, "training.fp8_recipe");
  EXPECT_EQ(p[0].differences[0].first, "tensorwise");
  EXPECT_EQ(p[0].differences[0].second, "mxfp8");
  EXPECT_DOUBLE_EQ(p[0].measured_ratio(), 1.05);
  EXPECT_DOUBLE_EQ(p[0].predicted_ratio(), 1.0);
  EXPECT_NEAR(p[0].error(), 1.0 / 1.05 - 1.0, 1e-12);
  EXPECT_EQ(p[1].second->run->id, "again");
  EXPECT_TRUE(p[1].differences.empty());
  EXPECT_EQ(p[2].second->run->id, "extra");
  ASSERT_EQ(p[2].differences.size(), 1u);
  EXPECT_EQ(p[2].differences[0].key, "schedule");
  EXPECT_EQ(p[2].differences[0].first, "");
  EXPECT_EQ(p[2].differences[0].second, "1f1b");
  // Two keys apart: paired only when two differences are allowed.
  const std::vector<RunPair> two = f.pairs(2);
  ASSERT_EQ(two.size(), 8u);  // and cs-far, mx-extra, again-far
  EXPECT_EQ(two[2].second->run->id, "far");
  EXPECT_EQ(two[2].differences.size(), 2u);
}

// Runs that name a scenario file (the CSV form) compare on the file and their overrides, a
// later override of a key winning.
TEST(RunPairs, ScenarioFileRunsCompareOnTheirOverrides) {
  std::vector<runs::Run> own(4);
  const std::vector<std::vector<std::string>> sets = {
      {"parallelism.tp=2"}, {"parallelism.tp=4"}, {"parallelism.tp=4", "parallelism.tp=2"}, {}};
  std::vector<RunResult> results(own.size());
  for (std::size_t i = 0; i < own.size(); ++i) {
    own[i].id = "r" + std::to_string(i);
    own[i].scenario_file = i < 3 ? "tiny.yaml" : "other.yaml";
    own[i].sets = sets[i];
    results[i] = {
        .run = &own[i], .simulated = true, .failure = {}, .predicted_s = 1.0, .measured_s = 1.0};
  }
  const std::vector<RunPair> p = run_pairs(results, 1);
  ASSERT_EQ(p.size(), 3u);  // r0-r1 (tp), r0-r2 (the same), r1-r2 (tp); other.yaml: 2 keys off
  EXPECT_EQ(p[0].differences.size(), 1u);
  EXPECT_EQ(p[0].differences[0].key, "parallelism.tp");
  EXPECT_TRUE(p[1].differences.empty());
  EXPECT_EQ(p[2].first->run->id, "r1");
}

}  // namespace
}  // namespace tessera::experiments::runs
