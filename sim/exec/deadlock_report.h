// SPDX-License-Identifier: Apache-2.0
// The message of a run that cannot finish: for the first stuck rank instances, every stream
// head that did not run and what it waits for (unfinished dependencies, group members that
// never reached the collective, or a send/recv without its partner).
#pragma once

#include <string>

#include "sim/exec/executor.h"

namespace tessera::exec {

// Contract: call after the scheduler drained with !executor.all_done(). Lists at most
// kMaxRanks instances and kMaxNames names per list, so the message stays readable.
std::string deadlock_report(const graph::ExecGraph& graph, const SharingPlan& plan,
                            const Executor& executor, base::SimTime now);

constexpr int kMaxReportedRanks = 8;
constexpr int kMaxReportedNames = 6;

}  // namespace tessera::exec
