// SPDX-License-Identifier: Apache-2.0
// Golden per-rank orders of pipeline_schedules.md §2.1-2.2 (p = 4, m = 8).
#include <gtest/gtest.h>

#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {
namespace {

TEST(Schedule, OneFOneBGoldenOrders) {
  const char* golden[] = {
      "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
      "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
      "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
      "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
  };
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(to_string(stage_order(ScheduleKind::k1F1B, 4, r, 8)), golden[r]) << "rank " << r;
  }
}

TEST(Schedule, GpipeRunsAllForwardsThenAllBackwards) {
  EXPECT_EQ(to_string(stage_order(ScheduleKind::kGpipe, 4, 2, 3)), "F0 F1 F2 B0 B1 B2");
}

TEST(Schedule, OneFOneBWithFewerMicrobatchesThanStages) {
  EXPECT_EQ(to_string(stage_order(ScheduleKind::k1F1B, 4, 0, 2)), "F0 F1 B0 B1");
  EXPECT_EQ(to_string(stage_order(ScheduleKind::k1F1B, 4, 3, 2)), "F0 B0 F1 B1");
}

}  // namespace
}  // namespace tessera::synth::schedule
