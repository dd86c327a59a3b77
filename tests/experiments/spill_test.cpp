// SPDX-License-Identifier: Apache-2.0
// experiments::analyze_spill: the cost model (timed by the roofline model) next to the
// simulation, per pipeline rank of a transposed encoder.
#include "experiments/spill.h"

#include <gtest/gtest.h>

#include <string>

#include "hwprofiles/hw_profile.h"
#include "sim/models/compute/roofline_compute_model.h"
#include "synth/build/synthesize.h"
#include "synth/schedule/spill_model.h"

namespace tessera::experiments {
namespace {

synth::Scenario qwen(const std::string& schedule) {
  return synth::load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/qwen2vl-7b-910c.yaml",
                              {"schedule=" + schedule});
}

TEST(AnalyzeSpill, ModelNextToSimulation) {
  synth::Scenario s = qwen("transpose");
  Outcome o = simulate_scenario(s, true, true);
  SpillAnalysis a = analyze_spill(s, o);
  ASSERT_EQ(a.rows.size(), static_cast<std::size_t>(s.parallel.pp));
  // The predictions are spill_model's with the roofline durations.
  hw::Profile profile = hw::load_profile(s.cluster.hardware);  // the model keeps a reference
  models::RooflineComputeModel roofline(profile);
  synth::schedule::SpillModel m = synth::schedule::spill_model(
      synth::transpose_plan(s), o.graph, s.microbatches(),
      [&](const graph::Node& n) { return static_cast<double>(roofline.duration(n)) * 1e-12; });
  EXPECT_DOUBLE_EQ(a.encoder_forward_s, m.encoder_forward_s);
  EXPECT_DOUBLE_EQ(a.stage_forward_s, m.stage_forward_s);
  for (std::size_t r = 0; r < a.rows.size(); ++r) {
    EXPECT_EQ(a.rows[r].owned, m.ranks[r].owned);
    EXPECT_DOUBLE_EQ(a.rows[r].spill_s, m.ranks[r].spill_s);
    EXPECT_GT(a.rows[r].encoder_before_s, 0.0);  // every rank runs encoder work first
    EXPECT_GE(a.rows[r].simulated_spill_s, 0.0);
  }
  EXPECT_GT(a.rows[1].ready_s, a.rows[0].ready_s);  // activations arrive stage after stage
}

TEST(AnalyzeSpill, NothingWithoutATransposedEncoder) {
  synth::Scenario s = qwen("1f1b");
  EXPECT_TRUE(analyze_spill(s, simulate_scenario(s, true, true)).rows.empty());
}

}  // namespace
}  // namespace tessera::experiments
