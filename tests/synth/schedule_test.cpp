// SPDX-License-Identifier: Apache-2.0
// Golden per-rank orders of pipeline_schedules.md §2.1-2.2 (p = 4, m = 8).
#include <gtest/gtest.h>

#include "sim/base/error.h"
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

namespace tessera::synth::schedule {
namespace {

ScheduleConfig interleaved(std::int64_t v, std::int64_t group = 0) {
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kInterleaved;
  cfg.chunks = v;
  cfg.group = group;
  return cfg;
}

// pipeline_schedules.md 2.3, p = 4, v = 2, m = 8 ("cS": virtual stage S).
TEST(Schedule, InterleavedGoldenOrders) {
  EXPECT_EQ(to_string(stage_order(interleaved(2), 4, 0, 8), true),
            "F0c0 F1c0 F2c0 F3c0 F0c4 F1c4 F2c4 F3c4 F4c0 F5c0 F6c0 B0c4 F7c0 B1c4 F4c4 B2c4 "
            "F5c4 B3c4 F6c4 B0c0 F7c4 B1c0 B2c0 B3c0 B4c4 B5c4 B6c4 B7c4 B4c0 B5c0 B6c0 B7c0");
  EXPECT_EQ(to_string(stage_order(interleaved(2), 4, 3, 8), true),
            "F0c3 F1c3 F2c3 F3c3 F0c7 B0c7 F1c7 B1c7 F2c7 B2c7 F3c7 B3c7 F4c3 B0c3 F5c3 B1c3 "
            "F6c3 B2c3 F7c3 B3c3 F4c7 B4c7 F5c7 B5c7 F6c7 B6c7 F7c7 B7c7 B4c3 B5c3 B6c3 B7c3");
}

TEST(Schedule, InterleavedWarmupCounts) {
  const int golden[] = {10, 8, 6, 4};
  for (int r = 0; r < 4; ++r) {
    auto order = stage_order(interleaved(2), 4, r, 8);
    int warmup = 0;
    while (order[static_cast<std::size_t>(warmup)].kind == Task::kForward) {
      ++warmup;
    }
    // The first backward follows one steady-state forward.
    EXPECT_EQ(warmup - 1, golden[r]) << "rank " << r;
  }
}

// Megatron's get_schedule_table comment: PP=2, g=3, m=5, v=2.
TEST(Schedule, InterleavedTableOfMegatron) {
  std::string mbs;
  std::string chunks;
  for (const Task& t : stage_order(interleaved(2, 3), 2, 0, 5)) {
    if (t.kind == Task::kForward) {
      mbs += std::to_string(t.microbatch) + " ";
      chunks += std::to_string(t.chunk) + " ";
    }
  }
  EXPECT_EQ(mbs, "0 1 2 0 1 2 3 4 3 4 ");
  EXPECT_EQ(chunks, "0 0 0 1 1 1 0 0 1 1 ");
}

TEST(Schedule, InterleavedRejectsMicrobatchCountsWithDependencyBubbles) {
  EXPECT_THROW(check_schedule(interleaved(2), 4, 5), base::InputError);
  EXPECT_THROW(check_schedule(interleaved(2), 4, 2), base::InputError);  // m < p
  EXPECT_NO_THROW(check_schedule(interleaved(2), 4, 8));
  EXPECT_NO_THROW(check_schedule(interleaved(2, 6), 4, 12));
}

}  // namespace
}  // namespace tessera::synth::schedule

namespace tessera::synth::schedule {
namespace {

// pipeline_schedules.md 2.4 (p = 4, m = 8; "B" fused, "b" input gradient, "w" weight gradient).
TEST(Schedule, ZeroBubbleH1GoldenOrders) {
  const char* golden[] = {
      "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
      "F0 F1 F2 b0 F3 B1 F4 B2 F5 B3 F6 B4 F7 b5 w0 b6 w5 b7 w6 w7",
      "F0 F1 b0 F2 b1 F3 B2 F4 B3 F5 B4 F6 B5 F7 b6 w0 b7 w1 w6 w7",
      "F0 b0 F1 b1 F2 b2 F3 B3 F4 B4 F5 B5 F6 B6 F7 b7 w0 w1 w2 w7",
  };
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(to_string(stage_order(ScheduleKind::kZbH1, 4, r, 8)), golden[r]) << "rank " << r;
  }
}

TEST(Schedule, ZeroBubbleH1RunsEveryWeightGradientOnce) {
  for (int m : {1, 2, 3, 4, 8, 13}) {
    for (int r = 0; r < 4; ++r) {
      auto order = stage_order(ScheduleKind::kZbH1, 4, r, m);
      std::vector<int> f(static_cast<std::size_t>(m)), b(f), w(f);
      for (const Task& t : order) {
        auto mb = static_cast<std::size_t>(t.microbatch);
        if (t.kind == Task::kForward) {
          ++f[mb];
        } else if (t.kind == Task::kBackward) {
          ++b[mb];
          ++w[mb];
        } else if (t.kind == Task::kBackwardInput) {
          ++b[mb];
          EXPECT_EQ(w[mb], 0) << "W before B";
        } else {
          ++w[mb];
          EXPECT_EQ(b[mb], 1) << "W before B";
        }
      }
      for (int j = 0; j < m; ++j) {
        auto mb = static_cast<std::size_t>(j);
        EXPECT_EQ(f[mb] * 100 + b[mb] * 10 + w[mb], 111) << "m=" << m << " r=" << r << " mb=" << j;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::synth::schedule

namespace tessera::synth::schedule {
namespace {

// pipeline_schedules.md 2.8, N = 4, M = 8 ("sK": stage K, "[x&y]": overlapped pair).
TEST(Schedule, DualPipeVGoldenOrders) {
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kDualPipeV;
  EXPECT_EQ(to_string(stage_order(cfg, 4, 0, 8), true, 's'),
            "F0s0 F1s0 F2s0 F3s0 F4s0 F5s0 F6s0 F0s7 b0s7 w0s7 F1s7 b1s7 w1s7 F2s7 b2s7 w2s7 F3s7 "
            "[F7s0&B3s7] [F4s7&B0s0] B4s7 [F5s7&B1s0] B5s7 [F6s7&B2s0] B6s7 [F7s7&B3s0] B7s7 b4s0 "
            "w4s0 b5s0 w5s0 b6s0 w6s0 b7s0 w7s0");
  EXPECT_EQ(to_string(stage_order(cfg, 4, 3, 8), true, 's'),
            "F0s3 F0s4 F1s3 F1s4 F2s3 F2s4 F3s3 F3s4 F4s3 B0s4 [F4s4&B0s3] [F5s3&B1s4] "
            "[F5s4&B1s3] [F6s3&B2s4] [F6s4&B2s3] [F7s3&B3s4] [F7s4&B3s3] B4s4 B4s3 B5s4 B5s3 "
            "b6s4 b6s3 b7s4 b7s3 w6s4 w6s3 w7s4 w7s3");
}

TEST(Schedule, DualPipeVRunsEveryStageOfEveryMicrobatchOnce) {
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kDualPipeV;
  for (auto [n, m] : {std::pair{4, 8}, std::pair{4, 10}, std::pair{2, 4}, std::pair{8, 16}}) {
    Placement place(cfg, n);
    for (int r = 0; r < n; ++r) {
      std::vector<int> f(static_cast<std::size_t>(2 * m)), b(f), w(f);
      for (const Task& t : stage_order(cfg, n, r, m)) {
        EXPECT_EQ(t.stage, place.stage_of(r, t.chunk));
        EXPECT_EQ(place.rank_of(t.stage), r);
        auto k = static_cast<std::size_t>(t.chunk * m + t.microbatch);
        f[k] += t.kind == Task::kForward ? 1 : 0;
        b[k] += t.kind == Task::kBackward || t.kind == Task::kBackwardInput ? 1 : 0;
        w[k] += t.kind == Task::kBackward || t.kind == Task::kWeight ? 1 : 0;
      }
      for (std::size_t k = 0; k < f.size(); ++k) {
        EXPECT_EQ(f[k] * 100 + b[k] * 10 + w[k], 111) << "N=" << n << " M=" << m << " r=" << r;
      }
    }
  }
  EXPECT_THROW(check_schedule(cfg, 4, 7), base::InputError);  // M < 2N
}

}  // namespace
}  // namespace tessera::synth::schedule
