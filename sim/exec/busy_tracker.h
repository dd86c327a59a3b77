// SPDX-License-Identifier: Apache-2.0
// Online accounting of one rank's time: compute busy, communication busy per group kind and
// the communication not hidden behind compute ("exposed"), updated at each start and end.
#pragma once

#include <array>

#include "base/units.h"
#include "graph/exec_graph.h"

namespace tessera::exec {

// Contract: calls come in non-decreasing time; ends match earlier begins. A stretch of time
// counts as compute when any compute node runs, as comm of kind k when any comm node of
// kind k runs (overlapping nodes of one kind count once), and as exposed comm of the first
// running kind in kind order (TP, DP, PP, CP, EP) when no compute runs.
class BusyTracker {
 public:
  void begin_compute(base::SimTime now);
  void end_compute(base::SimTime now);
  void begin_comm(graph::GroupKind k, base::SimTime now);
  void end_comm(graph::GroupKind k, base::SimTime now);
  // A node whose dependencies have finished waits for the host thread to issue it (between
  // the two calls); time in which only such nodes are pending counts as waiting for the host.
  void host_holds(base::SimTime now);
  void host_releases(base::SimTime now);

  [[nodiscard]] base::SimTime compute() const { return compute_; }
  [[nodiscard]] base::SimTime comm(int kind) const { return comm_[static_cast<std::size_t>(kind)]; }
  [[nodiscard]] base::SimTime exposed(int kind) const {
    return exposed_[static_cast<std::size_t>(kind)];
  }
  // Time with no kernel and no collective in flight while a ready node waited for the host.
  [[nodiscard]] base::SimTime host_wait() const { return host_wait_; }

 private:
  void advance(base::SimTime now);

  base::SimTime last_ = 0;
  int compute_active_ = 0;
  std::array<int, graph::kNumGroupKinds> comm_active_{};
  base::SimTime compute_ = 0;
  std::array<base::SimTime, graph::kNumGroupKinds> comm_{};
  std::array<base::SimTime, graph::kNumGroupKinds> exposed_{};
  int host_held_ = 0;
  base::SimTime host_wait_ = 0;
};

}  // namespace tessera::exec
