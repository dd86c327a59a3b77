// SPDX-License-Identifier: Apache-2.0
// Per-rank orders of docs/pipeline_schedules.md §2.1-2.8 (golden where the reference has them) and
// the virtual-stage maps of §4.1 (Placement).
#include <gtest/gtest.h>

#include "base/error.h"
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

// docs/pipeline_schedules.md 2.3, p = 4, v = 2, m = 8 ("cS": virtual stage S).
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

// docs/pipeline_schedules.md 2.4 (p = 4, m = 8; "B" fused, "b" input gradient, "w" weight
// gradient).
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

// docs/pipeline_schedules.md 2.8, N = 4, M = 8 ("sK": stage K, "[x&y]": overlapped pair).
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

namespace tessera::synth::schedule {
namespace {

ScheduleConfig of(ScheduleKind kind) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  return cfg;
}

// Section 2.7, N = 4, M = 8: the eight phases with hr = min(r, N-1-r) and, on ranks 2 and 3,
// the pipes swapped; pipe A is stages s0..s3 (rank r: s r), pipe B s4..s7 (rank r: s 7-r).
// Rank 0: 1: F0 F1 (pipe A); 2: F2, F0 of pipe B; 3: b0 w0 F1 of B; 4 (one iteration):
// [F3&B1 of B] [F2 of B & B0]; 5: B2 of B, [F3 of B & B1]; 6: B3 of B, b2; 7: w2 b3; 8: w3.
// Rank 1 is a middle rank: its first main iteration is not overlapped (F2s1 B0s6).
TEST(Schedule, DualPipeOrdersForN4M8) {
  const ScheduleConfig cfg = of(ScheduleKind::kDualPipe);
  EXPECT_EQ(to_string(stage_order(cfg, 4, 0, 8), true, 's'),
            "F0s0 F1s0 F2s0 F0s7 b0s7 w0s7 F1s7 [F3s0&B1s7] [F2s7&B0s0] B2s7 [F3s7&B1s0] B3s7 "
            "b2s0 w2s0 b3s0 w3s0");
  EXPECT_EQ(to_string(stage_order(cfg, 4, 1, 8), true, 's'),
            "F0s1 F0s6 F1s1 F1s6 F2s1 B0s6 [F2s6&B0s1] [F3s1&B1s6] [F3s6&B1s1] B2s6 B2s1 b3s6 "
            "b3s1 w3s6 w3s1");
}

// Rank N-1-r runs rank r's program with the pipes swapped (the XOR of section 2.7).
TEST(Schedule, DualPipeSecondHalfMirrorsFirstHalf) {
  const ScheduleConfig cfg = of(ScheduleKind::kDualPipe);
  for (auto [n, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 12}, std::pair{8, 16},
                      std::pair{8, 20}, std::pair{6, 14}}) {
    const Placement place(cfg, n);
    for (int r = 0; r < n / 2; ++r) {
      std::vector<Task> mirrored = stage_order(cfg, n, r, m);
      for (Task& t : mirrored) {
        t.chunk = 1 - t.chunk;
        t.stage = place.stage_of(n - 1 - r, t.chunk);
      }
      EXPECT_EQ(stage_order(cfg, n, n - 1 - r, m), mirrored) << "N=" << n << " M=" << m;
    }
  }
}

TEST(Schedule, DualPipeRejectsOddRanksOddOrTooFewMicrobatches) {
  const ScheduleConfig cfg = of(ScheduleKind::kDualPipe);
  auto message = [&](int n, int m) {
    try {
      check_schedule(cfg, n, m);
    } catch (const base::InputError& e) {
      return e.message();
    }
    return std::string();
  };
  EXPECT_EQ(message(3, 12),
            "DualPipe needs an even pp (its two pipes meet in the middle), got pp=3");
  EXPECT_EQ(message(4, 6),
            "DualPipe needs an even number of microbatches per replica, at least 2*pp = 8 (half "
            "go down each of its two pipes), got 6");
  EXPECT_NE(message(4, 9), "");
  EXPECT_NE(message(1, 4), "");
  EXPECT_EQ(message(4, 8), "");
  EXPECT_EQ(message(2, 4), "");
  EXPECT_THROW(stage_order(cfg, 4, 0, 6), base::InputError);
}

// Section 2.5 (p = 4, m = 8). No canonical ZB-H2 order exists; these are the unit-cost greedy's
// (B > F > W, at most 2p-1 = 7 in flight), kept as a regression check: rank 0 warms up with
// 7 forwards, the last rank alternates F and b and leaves its w's for the tail.
TEST(Schedule, ZeroBubbleH2GreedyOrders) {
  const char* golden[] = {
      "F0 F1 F2 F3 F4 F5 F6 b0 w0 b1 F7 b2 w1 b3 w2 b4 w3 b5 w4 b6 w5 w6 b7 w7",
      "F0 F1 F2 F3 F4 b0 F5 b1 F6 b2 w0 b3 F7 b4 w1 b5 w2 b6 w3 w4 b7 w5 w6 w7",
      "F0 F1 F2 b0 F3 b1 F4 b2 F5 b3 F6 b4 w0 b5 F7 b6 w1 w2 b7 w3 w4 w5 w6 w7",
      "F0 b0 F1 b1 F2 b2 F3 b3 F4 b4 F5 b5 F6 b6 w0 F7 b7 w1 w2 w3 w4 w5 w6 w7",
  };
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(to_string(stage_order(ScheduleKind::kZbH2, 4, r, 8)), golden[r]) << "rank " << r;
  }
}

TEST(Schedule, SplitBackwardSchedules) {
  EXPECT_FALSE(splits_backward(ScheduleKind::kGpipe));
  EXPECT_FALSE(splits_backward(ScheduleKind::k1F1B));
  EXPECT_FALSE(splits_backward(ScheduleKind::kInterleaved));
  EXPECT_TRUE(splits_backward(ScheduleKind::kZbH1));
  EXPECT_TRUE(splits_backward(ScheduleKind::kZbH2));
  EXPECT_TRUE(splits_backward(ScheduleKind::kDualPipeV));
  EXPECT_TRUE(splits_backward(ScheduleKind::kDualPipe));
}

}  // namespace
}  // namespace tessera::synth::schedule

namespace tessera::synth::schedule {
namespace {

// Section 4.1's virtual-stage maps.
TEST(Placement, FlatAndInterleavedAreOnePipe) {
  const Placement flat(of(ScheduleKind::k1F1B), 4);
  EXPECT_EQ(flat.stages(), 4);
  EXPECT_EQ(flat.pipes(), 1);
  EXPECT_EQ(flat.stages_per_pipe(), 4);
  EXPECT_EQ(flat.pipe_microbatches(8), 8);
  EXPECT_EQ(flat.prev_stage(0), -1);
  EXPECT_EQ(flat.next_stage(3), -1);
  EXPECT_EQ(flat.next_stage(1), 2);
  EXPECT_TRUE(flat.first_of_pipe(0));
  EXPECT_TRUE(flat.last_of_pipe(3));

  ScheduleConfig cfg = of(ScheduleKind::kInterleaved);
  cfg.chunks = 2;
  const Placement inter(cfg, 4);
  EXPECT_EQ(inter.stages(), 8);
  EXPECT_EQ(inter.pipes(), 1);
  EXPECT_EQ(inter.next_stage(3), 4);  // rank 3 chunk 0 -> rank 0 chunk 1
  EXPECT_EQ(inter.rank_of(4), 0);
  EXPECT_EQ(inter.chunk_of(4), 1);
  EXPECT_FALSE(inter.last_of_pipe(3));
  EXPECT_TRUE(inter.last_of_pipe(7));
  EXPECT_EQ(inter.stage_in_pipe(7), 7);
}

TEST(Placement, VShapeIsOnePipeThroughTheLastRankTwice) {
  const Placement v(of(ScheduleKind::kDualPipeV), 4);
  EXPECT_EQ(v.stages(), 8);
  EXPECT_EQ(v.pipes(), 1);
  EXPECT_EQ(v.next_stage(3), 4);
  EXPECT_EQ(v.rank_of(3), 3);
  EXPECT_EQ(v.rank_of(4), 3);
  EXPECT_EQ(v.rank_of(7), 0);
  EXPECT_TRUE(v.last_of_pipe(7));
  EXPECT_FALSE(v.first_of_pipe(4));
}

TEST(Placement, DualPipeHasTwoPipesInOppositeDirections) {
  const Placement d(of(ScheduleKind::kDualPipe), 4);
  EXPECT_EQ(d.stages(), 8);
  EXPECT_EQ(d.chunks(), 2);
  EXPECT_EQ(d.pipes(), 2);
  EXPECT_EQ(d.stages_per_pipe(), 4);
  EXPECT_EQ(d.pipe_microbatches(8), 4);
  for (int s = 0; s < 4; ++s) {
    // Pipe A: stage s on rank s; pipe B: its stage s is virtual stage 4+s on rank 3-s.
    EXPECT_EQ(d.pipe_of(s), 0);
    EXPECT_EQ(d.rank_of(s), s);
    EXPECT_EQ(d.chunk_of(s), 0);
    EXPECT_EQ(d.pipe_of(4 + s), 1);
    EXPECT_EQ(d.rank_of(4 + s), 3 - s);
    EXPECT_EQ(d.chunk_of(4 + s), 1);
    EXPECT_EQ(d.stage_in_pipe(4 + s), s);
    EXPECT_EQ(d.stage_of(3 - s, 1), 4 + s);
    EXPECT_EQ(d.stage_of(s, 0), s);
  }
  EXPECT_EQ(d.next_stage(3), -1);  // pipe A ends on rank 3 ...
  EXPECT_EQ(d.prev_stage(4), -1);  // ... where pipe B starts
  EXPECT_EQ(d.next_stage(4), 5);
  EXPECT_EQ(d.prev_stage(7), 6);
  EXPECT_TRUE(d.first_of_pipe(0));
  EXPECT_TRUE(d.first_of_pipe(4));
  EXPECT_TRUE(d.last_of_pipe(3));
  EXPECT_TRUE(d.last_of_pipe(7));
  EXPECT_FALSE(d.last_of_pipe(4));
}

}  // namespace
}  // namespace tessera::synth::schedule
