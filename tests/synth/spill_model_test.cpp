// SPDX-License-Identifier: Apache-2.0
// synth::schedule::spill_model: Mpipe's per-rank cost model on a synthesized transposed step,
// with the per-node durations a parameter (here made-up constants, not a hardware model).
#include "synth/schedule/spill_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "synth/build/synthesize.h"
#include "synth/scenario/scenario.h"

namespace tessera::synth::schedule {
namespace {

Scenario qwen_transposed() {
  return load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/qwen2vl-7b-910c.yaml",
                       {"schedule=transpose"});
}

struct Step1 {
  Scenario s = qwen_transposed();
  graph::ExecGraph g = synthesize(s);
  std::vector<std::vector<Step>> plan = transpose_plan(s);
  SpillModel at(double seconds_per_node) const {
    return spill_model(plan, g, s.microbatches(),
                       [=](const graph::Node&) { return seconds_per_node; });
  }
};

TEST(SpillModel, PerRankPredictions) {
  Step1 step;
  SpillModel m = step.at(1.0);
  ASSERT_EQ(m.ranks.size(), static_cast<std::size_t>(step.s.parallel.pp));
  EXPECT_GT(m.encoder_forward_s, 0.0);
  EXPECT_GT(m.stage_forward_s, 0.0);
  for (std::size_t r = 0; r < m.ranks.size(); ++r) {
    const SpillModelRank& k = m.ranks[r];
    EXPECT_EQ(k.stage, static_cast<int>(r));
    ASSERT_FALSE(k.owned.empty());
    EXPECT_EQ(k.owned.front(), static_cast<int>(r));  // round robin: rank r owns r, r + p, ...
    EXPECT_DOUBLE_EQ(k.spill_s, std::max(0.0, k.assigned_s - k.slack_s));
  }
  // w_r = E_0 + r F: the slack grows by F per rank.
  EXPECT_NEAR(m.ranks[1].slack_s - m.ranks[0].slack_s, m.stage_forward_s, 1e-9);
}

// Every figure is linear in the supplied durations: the model holds no timing of its own.
TEST(SpillModel, LinearInTheSuppliedDurations) {
  Step1 step;
  SpillModel one = step.at(1.0);
  SpillModel three = step.at(3.0);
  EXPECT_DOUBLE_EQ(three.encoder_forward_s, 3.0 * one.encoder_forward_s);
  EXPECT_DOUBLE_EQ(three.stage_forward_s, 3.0 * one.stage_forward_s);
  for (std::size_t r = 0; r < one.ranks.size(); ++r) {
    EXPECT_NEAR(three.ranks[r].slack_s, 3.0 * one.ranks[r].slack_s, 1e-9);
    EXPECT_NEAR(three.ranks[r].assigned_s, 3.0 * one.ranks[r].assigned_s, 1e-9);
  }
}

// Encoder work that takes no time is no encoder work to place; no plan, no model.
TEST(SpillModel, EmptyWithoutEncoderWorkOrPlan) {
  Step1 step;
  EXPECT_TRUE(step.at(0.0).ranks.empty());
  SpillModel none =
      spill_model({}, step.g, step.s.microbatches(), [](const graph::Node&) { return 1.0; });
  EXPECT_TRUE(none.ranks.empty());
  EXPECT_EQ(none.stage_forward_s, 0.0);
}

}  // namespace
}  // namespace tessera::synth::schedule
