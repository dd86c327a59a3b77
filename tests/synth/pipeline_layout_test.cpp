// SPDX-License-Identifier: Apache-2.0
// parallelism.pipeline_layout (docs/pipeline_schedules.md, "Pipeline layouts"): Megatron-Core's
// layout strings read into stages, their input errors, and what a layout builds: stages
// without decoder layers, and multi-token prediction on a stage of its own, whose stream
// travels to the loss stage beside the main one.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/yaml_reader.h"
#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/scenario/readers.h"
#include "tests/input_error.h"
#include "tests/synth/moe_fixtures.h"

namespace tessera::synth {
namespace {

using tessera::testing::error_of;

std::vector<PipelineStage> parse(const std::string& layout) {
  const base::YamlNode root = base::YamlNode::load_string("l: \"" + layout + "\"\n", "t.yaml");
  return reader::read_pipeline_layout(root.at("l"));
}

// NVIDIA's DeepSeek-V3 layout: the embedding and 3 layers, 29 stages of 2, then MTP and the
// loss on stages of their own (32 virtual stages).
TEST(PipelineLayout, ReadsMegatronsLayoutStrings) {
  const auto l = parse("Et*3|(tt|)*29,m|L");
  ASSERT_EQ(l.size(), 32U);
  EXPECT_EQ(l[0].embeddings, 1);
  EXPECT_EQ(l[0].layers, 3);
  for (std::size_t i = 1; i < 30; ++i) {
    EXPECT_EQ(l[i].layers, 2) << i;
  }
  EXPECT_EQ(l[30].layers, 0);
  EXPECT_EQ(l[30].mtp, 1);
  EXPECT_EQ(l[31].losses, 1);
  EXPECT_EQ(l[31].layers, 0);
  const auto e = parse("E||t|L");  // an empty stage
  ASSERT_EQ(e.size(), 4U);
  EXPECT_EQ(e[1].layers + e[1].embeddings + e[1].mtp + e[1].losses, 0);
}

// The error `layout` gives (its message, "<no error>" when it parses).
std::string layout_error(const std::string& layout) {
  return error_of([&] { parse(layout); });
}

TEST(PipelineLayout, MalformedStringsSayWhere) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Et|(tt|*2", "a '(' without its ')' at the end"},
      {"Et|x|L", "unexpected 'x' at character 4"},
      {"Et*0|L", "expected a repeat count >= 1 after '*'"},
      {"tE|L", "stage 0 has 'E' after a later part"},
      {std::string(40, '(') + "t" + std::string(40, ')'), "groups nested more than 16 deep"},
      {"(((t*1000)*1000)*1000)", "more than a million"},
      {"t*123456789012|L", "more than a million"},
      {"E()*9999999t|L", "an empty group '()'"},
  };
  for (const auto& [layout, message] : cases) {
    EXPECT_NE(layout_error(layout).find(message), std::string::npos) << layout;
  }
  EXPECT_EQ(layout_error("t|L)").rfind("t.yaml:1:4: error:", 0), 0U);
  const auto spaced = parse("E t * 2 |\tt L");  // spaces and tabs for reading
  ASSERT_EQ(spaced.size(), 2U);
  EXPECT_EQ(spaced[0].layers, 2);
}

// DeepSeek-V3-like, small: 4 layers on pp 4 (1F1B), the prediction module apart.
Scenario with_layout(const std::string& layout) {
  Scenario s = testing::moe_scenario(1, 2, 2);
  s.parallel.pp = 4;
  s.cluster.devices = 8;
  s.model.layers = 3;
  s.model.mtp_depth = 1;
  s.parallel.layout = parse(layout);
  s.parallel.stage_layers.clear();
  for (const auto& st : s.parallel.layout) {
    s.parallel.stage_layers.push_back(st.layers);
  }
  return s;
}

TEST(PipelineLayout, BadLayoutsNameWhatIsWrong) {
  auto message = [](const std::string& layout) {
    const auto v = validate(with_layout(layout));
    return v.empty() ? std::string("<none>") : v[0].message;
  };
  EXPECT_EQ(message("Et|tt|m|L"), "<none>");
  EXPECT_EQ(message("Et|t|tm|L|"),
            "the layout has 5 stages, but a pipe of this schedule has 4 "
            "(pp=4, 1 per rank and pipe)");
  EXPECT_EQ(message("Et|t|m|L"), "the layout has 2 t, but model.layers is 3");
  EXPECT_EQ(message("t|Et|tm|L"), "stage 0 has 0 E; the embedding is the first stage's, once");
  EXPECT_EQ(message("Et|tt|mL|"), "stage 2 has 1 L; the loss is the last stage's, once");
  EXPECT_EQ(message("Et|tt|m|t"), "the layout has 4 t, but model.layers is 3");
  EXPECT_EQ(message("Et|tt|L|L"), "stage 2 has 1 L; the loss is the last stage's, once");
  EXPECT_EQ(message("Et|tt||L"), "the layout has 0 m, but model.mtp_depth is 1");
  EXPECT_EQ(message("Etm|tt||L"),
            "m sits in stage 0: multi-token prediction follows the last decoder layer, in the "
            "last stage or the one before it");
}

// The stage after the prediction module receives [x; y], twice a layer's stream, and sends
// twice a layer's gradient back; the model's FLOPs are those of the module sitting with the
// head.
TEST(PipelineLayout, MtpApartSendsBothStreamsToTheLossStage) {
  const Scenario apart = with_layout("Et|tt|m|L");
  check_or_throw(apart);
  const graph::ExecGraph g = synthesize(apart);
  const StepPrograms p = build_programs(apart);
  ASSERT_TRUE(p.mtp.has_value());
  EXPECT_EQ(p.mtp->out_bytes, 2 * p.layer.out_bytes);
  const graph::RankGraph& loss_stage = g.graph_of(3 * 2);  // pipeline rank 3
  std::int64_t recv = 0;
  for (const graph::Node& n : loss_stage.nodes) {
    if (n.kind == graph::NodeKind::kRecv && n.phase == graph::Phase::kForward) {
      recv = static_cast<std::int64_t>(n.bytes);
    }
  }
  EXPECT_EQ(recv, 2 * p.layer.out_bytes);
  const Scenario together = with_layout("Et|t|t|mL");
  check_or_throw(together);
  const graph::ExecGraph h = synthesize(together);
  EXPECT_FALSE(build_programs(together).mtp.has_value());
  EXPECT_NEAR(h.info.model_flops, g.info.model_flops, 1e-9 * g.info.model_flops);
}

// The embedding's copies: with a tied output layer on the last rank and the prediction module
// on the one before, the embedding group holds three ranks, the first stage's first.
TEST(PipelineLayout, EmbeddingCopiesJoinOneGroup) {
  Scenario s = with_layout("Et|tt|m|L");
  s.model.tied_embeddings = true;
  check_or_throw(s);
  EXPECT_EQ(models::embedding_table_ranks(s), (std::vector<std::int64_t>{0, 3, 2}));
  const graph::ExecGraph g = synthesize(s);
  int groups = 0;
  for (const graph::Group& grp : g.groups) {
    if (grp.kind == graph::GroupKind::kPP && grp.ranks.size() == 3) {
      EXPECT_EQ(grp.ranks, (std::vector<std::int32_t>{0, 6, 4}));
      break;
    }
    ++groups;
  }
  EXPECT_LT(groups, static_cast<int>(g.groups.size()));
  s.model.tied_embeddings = false;
  EXPECT_EQ(models::embedding_table_ranks(s), (std::vector<std::int64_t>{0, 2}));
}

}  // namespace
}  // namespace tessera::synth
