// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/busy_tracker.h"

#include <cstddef>

namespace tessera::exec {

void BusyTracker::advance(base::SimTime now) {
  const base::SimTime dt = now - last_;
  last_ = now;
  if (dt <= 0) {
    return;
  }
  if (compute_active_ > 0) {
    compute_ += dt;
  }
  bool charged = compute_active_ > 0;
  for (std::size_t k = 0; k < comm_active_.size(); ++k) {
    if (comm_active_[k] == 0) {
      continue;
    }
    comm_[k] += dt;
    if (!charged) {
      exposed_[k] += dt;
      charged = true;
    }
  }
  if (!charged && host_held_ > 0) {
    host_wait_ += dt;
  }
}

void BusyTracker::begin_compute(base::SimTime now) {
  advance(now);
  ++compute_active_;
}

void BusyTracker::end_compute(base::SimTime now) {
  advance(now);
  --compute_active_;
}

void BusyTracker::begin_comm(graph::GroupKind k, base::SimTime now) {
  advance(now);
  ++comm_active_[static_cast<std::size_t>(k)];
}

void BusyTracker::end_comm(graph::GroupKind k, base::SimTime now) {
  advance(now);
  --comm_active_[static_cast<std::size_t>(k)];
}

void BusyTracker::host_holds(base::SimTime now) {
  advance(now);
  ++host_held_;
}

void BusyTracker::host_releases(base::SimTime now) {
  advance(now);
  --host_held_;
}

}  // namespace tessera::exec
