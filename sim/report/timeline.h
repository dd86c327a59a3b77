// SPDX-License-Identifier: Apache-2.0
// The Perfetto timeline: Chrome trace-event JSON, gzip-compressed (timeline.json.gz), of the
// ranks the simulation recorded (RunStats::timeline_ranks): pid = rank, one tid per stream,
// microsecond timestamps, `cat` = the op class (compute) or "<kind>_comm", and a counter
// track of HBM in use per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/run_stats.h"

namespace tessera::sim::report {

struct TimelineWritten {
  std::uint64_t json_bytes = 0;  // uncompressed
  std::uint64_t file_bytes = 0;  // on disk
};

TimelineWritten write_timeline(const std::string& path, const graph::ExecGraph& g,
                               const RunStats& r);

// One line on which ranks the timeline shows and which it leaves out ("" without a timeline).
std::string timeline_note(const graph::ExecGraph& g, const RunStats& r);

}  // namespace tessera::sim::report
