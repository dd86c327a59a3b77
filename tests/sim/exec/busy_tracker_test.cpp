// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/busy_tracker.h"

#include <gtest/gtest.h>

namespace tessera::exec {
namespace {

using graph::GroupKind;

TEST(BusyTracker, ExposedCommIsCommNotUnderComputeChargedToTheFirstKind) {
  BusyTracker b;
  b.begin_compute(0);
  b.begin_comm(GroupKind::kDP, 5);  // hidden until 10
  b.end_compute(10);
  b.begin_comm(GroupKind::kTP, 12);  // TP and DP overlap 12..15: charged to TP
  b.end_comm(GroupKind::kDP, 15);
  b.begin_comm(GroupKind::kTP, 16);  // a second TP op overlapping: counted once
  b.end_comm(GroupKind::kTP, 18);
  b.end_comm(GroupKind::kTP, 20);
  EXPECT_EQ(b.compute(), 10);
  EXPECT_EQ(b.comm(static_cast<int>(GroupKind::kDP)), 10);
  EXPECT_EQ(b.comm(static_cast<int>(GroupKind::kTP)), 8);
  EXPECT_EQ(b.exposed(static_cast<int>(GroupKind::kDP)), 2);  // 10..12
  EXPECT_EQ(b.exposed(static_cast<int>(GroupKind::kTP)), 8);  // 12..20
}

}  // namespace
}  // namespace tessera::exec
