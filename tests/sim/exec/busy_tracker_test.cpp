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

// Waiting for the host: a ready node not issued yet while nothing runs on the device.
TEST(BusyTracker, HostWaitIsOnlyWhatNothingElseCovers) {
  BusyTracker b;
  b.host_holds(0);  // 0..4: only the host's issue pending
  b.begin_compute(4);
  b.host_releases(4);
  b.host_holds(6);  // the next node waits for the host, under compute until 8
  b.end_compute(8);
  b.begin_comm(GroupKind::kTP, 9);  // 9..11: exposed TP, not host wait
  b.end_comm(GroupKind::kTP, 11);
  b.host_releases(12);
  EXPECT_EQ(b.host_wait(), 4 + 1 + 1);  // 0..4, 8..9, 11..12
  EXPECT_EQ(b.exposed(static_cast<int>(GroupKind::kTP)), 2);
}

}  // namespace
}  // namespace tessera::exec
