// SPDX-License-Identifier: Apache-2.0
// The schedule spec syntax: what `compare --schedules`, `schedule:` and `--set schedule=`
// accept, and the errors that name what was expected.
#include "synth/schedule/schedule_spec.h"

#include <gtest/gtest.h>

#include "tests/input_error.h"

namespace tessera::synth::schedule {
namespace {

using testing::error_of;

TEST(ScheduleSpec, SkeletonNames) {
  EXPECT_EQ(parse_schedule_spec("1f1b").kind, ScheduleKind::k1F1B);
  EXPECT_EQ(parse_schedule_spec("gpipe").kind, ScheduleKind::kGpipe);
  EXPECT_EQ(parse_schedule_spec("zb-h1").kind, ScheduleKind::kZbH1);
  EXPECT_EQ(parse_schedule_spec("zb-h2").kind, ScheduleKind::kZbH2);
  EXPECT_EQ(parse_schedule_spec("dualpipev").kind, ScheduleKind::kDualPipeV);
  EXPECT_EQ(parse_schedule_spec("dualpipe").kind, ScheduleKind::kDualPipe);
  for (std::string_view name : schedule_names()) {
    if (name != "interleaved") {
      EXPECT_EQ(schedule_name(parse_schedule_spec(name).kind), name);
      EXPECT_EQ(parse_schedule_spec(name).encoder, EncoderPlacement::kInline);
    }
  }
}

TEST(ScheduleSpec, InterleavedTakesItsChunks) {
  ScheduleSpec s = parse_schedule_spec("interleaved");
  EXPECT_EQ(s.kind, ScheduleKind::kInterleaved);
  EXPECT_EQ(s.chunks, 2);
  EXPECT_EQ(parse_schedule_spec("interleaved:3").chunks, 3);
  EXPECT_EQ(error_of([] { (void)parse_schedule_spec("interleaved:1"); }),
            "error: 'interleaved:1': expected the model chunks per rank after ':', a whole number "
            ">= 2, got '1'");
  EXPECT_EQ(error_of([] { (void)parse_schedule_spec("interleaved:x"); }),
            "error: 'interleaved:x': expected the model chunks per rank after ':', a whole number "
            ">= 2, got 'x'");
  EXPECT_EQ(error_of([] { (void)parse_schedule_spec("interleaved:2:3"); }),
            "error: 'interleaved:2:3': interleaved takes one parameter (the model chunks per "
            "rank), got 2");
}

TEST(ScheduleSpec, EncoderPlacements) {
  ScheduleSpec t = parse_schedule_spec("transpose");
  EXPECT_EQ(t.encoder, EncoderPlacement::kTranspose);
  EXPECT_EQ(t.kind, ScheduleKind::k1F1B);
  EXPECT_EQ(t.owners, OwnerMode::kRoundRobin);
  t = parse_schedule_spec("transpose:greedy:owner");
  EXPECT_EQ(t.owners, OwnerMode::kGreedy);
  EXPECT_EQ(t.encoder_backward, EncoderBackward::kOwner);
  EXPECT_EQ(parse_schedule_spec("transpose:recompute:min").owners, OwnerMode::kMin);
  EXPECT_EQ(parse_schedule_spec("encoder-stages").encoder_stages, 1);
  EXPECT_EQ(parse_schedule_spec("encoder-stages:2").encoder, EncoderPlacement::kStages);
  EXPECT_EQ(parse_schedule_spec("encoder-stages:2").encoder_stages, 2);
  EXPECT_EQ(parse_schedule_spec("encoder-separate:4").encoder, EncoderPlacement::kSeparate);
  EXPECT_EQ(parse_schedule_spec("encoder-separate:4").encoder_devices, 4);
  EXPECT_EQ(parse_schedule_spec("encoder-separate").encoder_devices, 1);
  EXPECT_EQ(error_of([] { (void)parse_schedule_spec("transpose:best"); }),
            "error: 'transpose:best': 'best' is neither an owner map (round_robin, min, greedy) "
            "nor an encoder backward (recompute, owner)");
  EXPECT_NE(error_of([] {
              (void)parse_schedule_spec("encoder-separate:0");
            }).find("expected the encoder's devices after ':', a whole number >= 1, got '0'"),
            std::string::npos);
}

TEST(ScheduleSpec, UnknownNamesSuggestAndListEveryForm) {
  EXPECT_EQ(error_of([] { (void)parse_schedule_spec("1f1c"); }),
            "error: unknown schedule '1f1c'; did you mean '1f1b'? (expected one of: " +
                schedule_spec_forms() + ")");
  EXPECT_NE(schedule_spec_forms().find("interleaved[:chunks]"), std::string::npos);
  EXPECT_NE(schedule_spec_forms().find("encoder-separate[:n]"), std::string::npos);
  EXPECT_EQ(error_of([] { (void)parse_schedule_spec("1f1b:2"); }),
            "error: '1f1b:2': the 1f1b schedule takes no ':' parameter");
}

}  // namespace
}  // namespace tessera::synth::schedule
