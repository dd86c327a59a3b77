// SPDX-License-Identifier: Apache-2.0
// The plan invariants of docs/pipeline_schedules.md 4.2 on every schedule over a grid of (p, m, v),
// and corrupted plans that check_plan must catch.
#include "synth/schedule/plan_check.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "base/error.h"

namespace tessera::synth::schedule {
namespace {

ScheduleConfig of(ScheduleKind kind, std::int64_t chunks = 1, std::int64_t group = 0) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  cfg.chunks = chunks;
  cfg.group = group;
  return cfg;
}

// Every plan check_schedule accepts passes; returns how many ran.
int check_grid(const ScheduleConfig& cfg) {
  int checked = 0;
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 24; ++m) {
      try {
        check_schedule(cfg, p, m);
      } catch (const base::InputError&) {
        continue;
      }
      const std::string what =
          std::string(schedule_name(cfg.kind)) + " v=" + std::to_string(cfg.chunks) +
          " g=" + std::to_string(cfg.group) + " p=" + std::to_string(p) + " m=" + std::to_string(m);
      EXPECT_NO_THROW(check_plan(cfg, p, m)) << what;
      ++checked;
    }
  }
  return checked;
}

TEST(PlanCheck, EveryScheduleOverAGridOfSizes) {
  // Flat schedules run any m, m < p included: 8 * 24 plans each.
  for (ScheduleKind kind :
       {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kZbH1, ScheduleKind::kZbH2}) {
    EXPECT_EQ(check_grid(of(kind)), 8 * 24) << schedule_name(kind);
  }
  // Interleaved: pp <= g <= m and m mod g in {0} or >= pp.
  for (int v : {2, 3, 4}) {
    EXPECT_GT(check_grid(of(ScheduleKind::kInterleaved, v)), 20) << "v=" << v;
    EXPECT_GT(check_grid(of(ScheduleKind::kInterleaved, v, 6)), 10) << "v=" << v << " g=6";
  }
  // DualPipeV: M >= 2N. DualPipe: N even, M even and >= 2N.
  EXPECT_GT(check_grid(of(ScheduleKind::kDualPipeV)), 50);
  EXPECT_EQ(check_grid(of(ScheduleKind::kDualPipe)), 11 + 9 + 7 + 5);  // N = 2, 4, 6, 8
}

// Throws base::InternalError containing `what`.
void expect_caught(const Placement& place, const Plan& plan, int m, const std::string& what) {
  try {
    check_plan(place, plan, m);
    ADD_FAILURE() << "check_plan accepted a plan with " << what;
  } catch (const base::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(PlanCheck, CatchesMissingAndDuplicatedTasks) {
  const ScheduleConfig cfg = of(ScheduleKind::k1F1B);
  const Placement place(cfg, 4);
  Plan plan = make_plan(cfg, 4, 8);
  Plan missing = plan;
  missing[2].erase(missing[2].begin() + 4);  // rank 2: "F0 F1 B0 F2 B1 ..."
  expect_caught(place, missing, 8, "rank 2, stage 2, microbatch 1 (pipe 0): missing its backward");
  Plan twice = plan;
  twice[1].push_back(twice[1][0]);
  expect_caught(place, twice, 8, "rank 1, stage 1, microbatch 0: a second forward");
  Plan beyond = plan;
  beyond[0][0].microbatch = 8;
  expect_caught(place, beyond, 8,
                "rank 0, stage 0, microbatch 8: each pipe runs microbatches 0..7");
}

TEST(PlanCheck, CatchesTasksOnTheWrongRank) {
  const ScheduleConfig cfg = of(ScheduleKind::kDualPipe);
  const Placement place(cfg, 4);
  Plan plan = make_plan(cfg, 4, 8);
  plan[1].push_back(plan[0].back());  // rank 0's last w (stage 0) on rank 1
  plan[0].pop_back();
  expect_caught(place, plan, 4,
                "rank 1, stage 0, microbatch 3, chunk 0: the stage is chunk 0 of rank 0");
  Plan chunk = make_plan(cfg, 4, 8);
  chunk[3][0].chunk = 0;  // F0 of pipe B's first stage (virtual 4) named as chunk 0
  expect_caught(place, chunk, 4, "rank 3, stage 4, microbatch 0, chunk 0: the stage is chunk 1");
}

TEST(PlanCheck, CatchesOrderWithinARank) {
  // ZB-H1 rank 3: "F0 b0 ..."; backward before forward, and w before b.
  const ScheduleConfig cfg = of(ScheduleKind::kZbH1);
  const Placement place(cfg, 4);
  Plan plan = make_plan(cfg, 4, 8);
  std::swap(plan[3][0], plan[3][1]);
  expect_caught(place, plan, 8, "rank 3, stage 3, microbatch 0 (pipe 0): runs the backward before");
  Plan w_first = make_plan(cfg, 4, 8);
  auto& r3 = w_first[3];  // "... F7 b7 w0 w1 w2 w7": move w7 before b7
  ASSERT_EQ(r3[r3.size() - 5].kind, Task::kBackwardInput);
  std::swap(r3[r3.size() - 5], r3.back());
  expect_caught(place, w_first, 8,
                "rank 3, stage 3, microbatch 7: weight gradient w without its split backward");
}

TEST(PlanCheck, CatchesDeadlocks) {
  // p = 2, m = 2. Rank 0 waits for B0 before running F1; rank 1 waits for F1 before B0.
  const ScheduleConfig cfg = of(ScheduleKind::k1F1B);
  const Placement place(cfg, 2);
  Plan plan = make_plan(cfg, 2, 2);
  ASSERT_EQ(to_string(plan[0]), "F0 F1 B0 B1");
  ASSERT_EQ(to_string(plan[1]), "F0 B0 F1 B1");
  std::swap(plan[0], plan[1]);
  for (int r = 0; r < 2; ++r) {
    for (Task& t : plan[static_cast<std::size_t>(r)]) {
      t.stage = r;
    }
  }
  ASSERT_EQ(to_string(plan[1]), "F0 F1 B0 B1");
  expect_caught(place, plan, 2,
                "deadlock under the rank orders, waiting: B0 (rank 0, stage 0, microbatch 0); F1 "
                "(rank 1, stage 1, microbatch 1)");
}

TEST(PlanCheck, CatchesPairsThatCannotStartTogether) {
  // DualPipe's pairs start when both halves' inputs are there. Pairing rank 0's first F with
  // the next F is malformed; pairing a forward with the backward that needs it deadlocks.
  const ScheduleConfig cfg = of(ScheduleKind::kDualPipe);
  const Placement place(cfg, 4);
  Plan plan = make_plan(cfg, 4, 8);
  plan[0][0].paired = true;
  expect_caught(place, plan, 4,
                "rank 0, stage 0, microbatch 0: a paired task must be a forward followed by a "
                "backward");
  // 1F1B p = 2, rank 1: "F0 B0 ..." on the last stage; as a pair, B0 would need F0 first.
  const ScheduleConfig flat = of(ScheduleKind::k1F1B);
  Plan self = make_plan(flat, 2, 2);
  self[1][0].paired = true;
  expect_caught(Placement(flat, 2), self, 2, "deadlock");
}

}  // namespace
}  // namespace tessera::synth::schedule
