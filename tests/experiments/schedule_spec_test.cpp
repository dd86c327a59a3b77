// SPDX-License-Identifier: Apache-2.0
// The --schedules specs and the reasons a schedule cannot run a workload.
#include "experiments/schedule_spec.h"

#include <gtest/gtest.h>

#include "synth/scenario/scenario.h"
#include "tests/input_error.h"

namespace tessera::experiments {
namespace {

using testing::error_of;

synth::Scenario tiny() {
  return synth::load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml", {});
}

TEST(ScheduleSpec, BodySchedules) {
  EXPECT_EQ(parse_schedule("1f1b").kind, synth::ScheduleKind::k1F1B);
  EXPECT_EQ(parse_schedule("gpipe").kind, synth::ScheduleKind::kGpipe);
  EXPECT_EQ(parse_schedule("dualpipev").kind, synth::ScheduleKind::kDualPipeV);
  EXPECT_EQ(parse_schedule("dualpipe").kind, synth::ScheduleKind::kDualPipe);
  synth::ScheduleConfig il = parse_schedule("interleaved:3");
  EXPECT_EQ(il.kind, synth::ScheduleKind::kInterleaved);
  EXPECT_EQ(il.chunks, 3);
  EXPECT_EQ(parse_schedule("interleaved").chunks, 2);
}

TEST(ScheduleSpec, EncoderPlacements) {
  synth::ScheduleConfig t = parse_schedule("transpose:min:owner");
  EXPECT_EQ(t.encoder, synth::EncoderPlacement::kTranspose);
  EXPECT_EQ(t.owners, synth::OwnerMode::kMin);
  EXPECT_EQ(t.encoder_backward, synth::EncoderBackward::kOwner);
  EXPECT_EQ(parse_schedule("encoder-separate:4").encoder_devices, 4);
  EXPECT_EQ(parse_schedule("encoder-stages").encoder_stages, 1);
}

TEST(ScheduleSpec, BadSpecsNameTheOption) {
  EXPECT_NE(error_of([] { parse_schedule("1f1c"); }).find("unknown schedule '1f1c'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_schedule("interleaved:x"); }).find("whole number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_schedule("transpose:fast"); }).find("'fast'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_schedule("encoder-separate:0"); }).find("whole number >= 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_schedule("1f1c"); }).find("--schedules: unknown"),
            std::string::npos);
  EXPECT_NE(error_of([] { split_schedules(""); }).find("--schedules"), std::string::npos);
}

TEST(ScheduleSpec, SplitKeepsOrder) {
  std::vector<std::string> want = {"1f1b", "gpipe", "interleaved:2"};
  EXPECT_EQ(split_schedules("1f1b,gpipe,interleaved:2"), want);
}

TEST(ScheduleSpec, Unsupported) {
  synth::Scenario s = tiny();
  EXPECT_EQ(unsupported(s, parse_schedule("1f1b")), "");
  EXPECT_EQ(unsupported(s, parse_schedule("transpose")), "the scenario has no encoder to place");
  s.model.layers = 3;  // pp=2 stages do not divide 3 layers
  EXPECT_NE(unsupported(s, parse_schedule("gpipe")).find("pp=2 does not divide model.layers=3"),
            std::string::npos)
      << unsupported(s, parse_schedule("gpipe"));
  s.parallel.stage_layers = {1, 2};  // an uneven split runs
  EXPECT_EQ(unsupported(s, parse_schedule("gpipe")), "");
}

}  // namespace
}  // namespace tessera::experiments
