// SPDX-License-Identifier: Apache-2.0
// Rank 0's collectives by group kind, type and the algorithm and protocol the tuner chose
// (RunStats::rank0_collectives): a block of the console summary and a summary.json field,
// so that a user can see what ran where, and for how long, without the timeline.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/run_stats.h"

namespace tessera::sim::report {

// "  collectives on rank 0 ..." and one line per (kind, type, algorithm, protocol); nothing
// when rank 0 ran no collective.
void print_collectives(std::ostream& out, const RunStats& r);

// [{"kind", "type", "algorithm", "protocol", "calls", "time_s"}, ...] in the same order.
nlohmann::json collectives_json(const RunStats& r);

}  // namespace tessera::sim::report
