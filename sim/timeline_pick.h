// SPDX-License-Identifier: Apache-2.0
// Which simulated instances record spans and memory, and which ranks the timeline shows:
// the ranks asked for, each shown with the spans of the instance that stands for it.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/exec/sharing/sharing_plan.h"
#include "sim/run_stats.h"

namespace tessera::sim {

struct TimelinePick {
  std::vector<char> recorded;       // per instance
  std::vector<TimelineRank> ranks;  // in rank order
};

// `wanted` empty: the instances' representatives, at most `max_default` of them (the first
// rank of each pipeline stage first, then the others in rank order). Throws
// base::InputError for a rank outside the graph.
TimelinePick pick_timeline(const graph::ExecGraph& g, const exec::SharingPlan& plan,
                           const std::vector<std::int32_t>& wanted, std::size_t max_default);

}  // namespace tessera::sim
