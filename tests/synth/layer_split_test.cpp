// SPDX-License-Identifier: Apache-2.0
// Uneven pipeline splits: the layer boundaries of parallel/layer_split.h and what a
// synthesized step does with them (which layers, and so how much static memory, each stage
// holds). Llama-3-405B's 126 layers on 16 stages: Megatron-Core puts 7 on the first and the
// last stage (--decoder-first/last-pipeline-num-layers) and 8 on each of the other 14.
#include "synth/parallel/layer_split.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "synth/build/synthesize.h"
#include "synth/scenario/validate.h"
#include "tests/synth/synth_fixtures.h"
#include "tests/temp_dir.h"

namespace tessera::synth {
namespace {

using V = std::vector<std::int64_t>;

TEST(LayerSplit, EvenSplitGivesTheRemainderToTheFirstStages) {
  EXPECT_EQ(parallel::layer_bounds(8, 4, {}), (V{0, 2, 4, 6, 8}));
  EXPECT_EQ(parallel::layer_bounds(10, 4, {}), (V{0, 3, 6, 8, 10}));
}

TEST(LayerSplit, ExplicitCountsAreCumulated) {
  EXPECT_EQ(parallel::layer_bounds(5, 2, {2, 3}), (V{0, 2, 5}));
  EXPECT_THROW((void)parallel::layer_bounds(5, 2, {2, 2}), base::InternalError);
  EXPECT_THROW((void)parallel::layer_bounds(5, 3, {2, 3}), base::InternalError);
}

TEST(LayerSplit, FirstAndLastStageCountsOfMegatronCore) {
  V counts = parallel::first_last_split(126, 16, 7, 7);
  ASSERT_EQ(counts.size(), 16U);
  EXPECT_EQ(counts.front(), 7);
  EXPECT_EQ(counts.back(), 7);
  EXPECT_EQ(counts[1], 8);
  EXPECT_EQ(parallel::layer_bounds(126, 16, counts).back(), 126);
  EXPECT_EQ(parallel::first_last_split(10, 4, 1, 0), (V{1, 3, 3, 3}));
  EXPECT_EQ(parallel::first_last_split(10, 4, 0, 4), (V{2, 2, 2, 4}));
  EXPECT_EQ(parallel::first_last_split(10, 4, 2, 2), (V{2, 3, 3, 2}));
  EXPECT_TRUE(parallel::first_last_split(126, 16, 7, 6).empty());  // 113 over 14 does not divide
  EXPECT_TRUE(parallel::first_last_split(4, 2, 3, 3).empty());     // more than the layers
}

// Names of the layers a rank class holds ("L<i>." prefixes of its forward nodes).
std::set<std::string> layers_of(const graph::ExecGraph& g, std::size_t cls) {
  std::set<std::string> out;
  for (const graph::Node& n : g.classes[cls].nodes) {
    const std::string& name = g.names[n.name];
    if (name.size() > 1 && name[0] == 'L' && name.find('.') != std::string::npos) {
      out.insert(name.substr(0, name.find('.')));
    }
  }
  return out;
}

TEST(LayerSplit, SynthesizedStagesHoldTheirLayersAndTheirWeights) {
  Scenario s = testing::gpt_scenario_unchecked(5, 256, 4, 1, 2, 1);
  s.parallel.stage_layers = {2, 3};
  check_or_throw(s);
  graph::ExecGraph g = synthesize(s);
  ASSERT_EQ(g.classes.size(), 2U);
  EXPECT_EQ(layers_of(g, 0), (std::set<std::string>{"L0", "L1"}));
  EXPECT_EQ(layers_of(g, 1), (std::set<std::string>{"L2", "L3", "L4"}));
  // Per-layer weights are the same, so the stage with one more layer holds more.
  Scenario even = testing::gpt_scenario(6, 256, 4, 1, 2, 1);
  graph::ExecGraph e = synthesize(even);
  EXPECT_LT(g.classes[0].static_memory, e.classes[0].static_memory);
  EXPECT_EQ(layers_of(e, 0), (std::set<std::string>{"L0", "L1", "L2"}));
}

// Llama-3-405B's 126 layers on 16 stages, as Megatron-Core runs it: 7 + 14 x 8 + 7, from a
// scenario file (the loader's keys, its validation, then synthesis).
TEST(LayerSplit, Llama3_405BOnSixteenStagesFromAScenario) {
  tessera::testing::TempDir dir;
  const std::string path = dir.path() + "/405b.yaml";
  std::ofstream(path) << "model: llama3-405b\n"
                         "training: {seq_len: 8192, global_batch: 16, micro_batch: 1}\n"
                         "parallelism: {tp: 8, pp: 16, first_stage_layers: 7, "
                         "last_stage_layers: 7}\n"
                         "cluster: {hardware: h100-sxm, topology: dgx-h100-superpod, devices: "
                         "128}\n"
                         "schedule: 1f1b\n";
  Scenario s = load_scenario(path);
  EXPECT_EQ(s.parallel.first_stage_layers, 7);
  graph::ExecGraph g = synthesize(s);
  ASSERT_EQ(g.classes.size(), 16U);
  EXPECT_EQ(layers_of(g, 0).size(), 7U);
  EXPECT_EQ(layers_of(g, 1).size(), 8U);
  EXPECT_EQ(layers_of(g, 15).size(), 7U);
  EXPECT_EQ(layers_of(g, 15).count("L125"), 1U);
}

}  // namespace
}  // namespace tessera::synth
