// SPDX-License-Identifier: Apache-2.0
// The schedule and encoder placement registries: the single source of names, in the order
// `tessera list` prints, and the properties the rest of synth asks them for.
#include <gtest/gtest.h>

#include "synth/schedule/encoder_placements.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {
namespace {

TEST(ScheduleRegistry, NamesInListOrderAndEveryKindRoundTrips) {
  const std::vector<std::string_view> expected = {"gpipe", "1f1b",      "interleaved", "zb-h1",
                                                  "zb-h2", "dualpipev", "dualpipe"};
  auto names = schedule_names();
  EXPECT_EQ(std::vector<std::string_view>(names.begin(), names.end()), expected);
  for (std::string_view name : names) {
    const PipelineSchedule* s = builtin_schedules().find(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(schedule_name(s->kind()), name);
    EXPECT_EQ(&builtin_schedules().get(s->kind()), s);
    EXPECT_EQ(schedule_kind(name), s->kind());
  }
  EXPECT_EQ(builtin_schedules().find("1f1c"), nullptr);
  EXPECT_FALSE(schedule_kind("transpose").has_value());
}

TEST(ScheduleRegistry, PropertiesOfTheBuiltins) {
  const auto& r = builtin_schedules();
  EXPECT_EQ(r.get(ScheduleKind::kDualPipeV).shape(), PlacementShape::kV);
  EXPECT_EQ(r.get(ScheduleKind::kDualPipe).shape(), PlacementShape::kDual);
  EXPECT_EQ(r.get(ScheduleKind::kInterleaved).shape(), PlacementShape::kFlat);
  for (auto k : {ScheduleKind::kZbH1, ScheduleKind::kZbH2, ScheduleKind::kDualPipeV,
                 ScheduleKind::kDualPipe}) {
    EXPECT_TRUE(splits_backward(k)) << schedule_name(k);
  }
  for (auto k : {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved}) {
    EXPECT_FALSE(splits_backward(k)) << schedule_name(k);
  }
  for (std::string_view name : schedule_names()) {
    bool flat = name == "gpipe" || name == "1f1b" || name == "zb-h1";
    EXPECT_EQ(r.find(name)->takes_encoder_stages(), flat) << name;
  }
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kInterleaved;
  cfg.chunks = 3;
  EXPECT_EQ(schedule_label(cfg), "interleaved (v=3)");
}

TEST(EncoderPlacementRegistry, NamesAndSpecForms) {
  auto names = encoder_placement_names();
  EXPECT_EQ(std::vector<std::string_view>(names.begin(), names.end()),
            (std::vector<std::string_view>{"inline", "stages", "transpose", "separate"}));
  const auto& r = builtin_encoder_placements();
  EXPECT_EQ(r.find("stages")->placement, EncoderPlacement::kStages);
  EXPECT_EQ(r.find_spec("encoder-separate")->placement, EncoderPlacement::kSeparate);
  EXPECT_EQ(r.find_spec("transpose")->placement, EncoderPlacement::kTranspose);
  EXPECT_EQ(r.find_spec(""), nullptr);
  EXPECT_EQ(r.get(EncoderPlacement::kInline).name, "inline");
}

}  // namespace
}  // namespace tessera::synth::schedule
