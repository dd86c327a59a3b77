// SPDX-License-Identifier: Apache-2.0
// Replaying one measured iteration of a Kineto trace through the simulator: as measured,
// or moved to another hardware profile (measured::retime).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "graph/exec_graph.h"
#include "measured/iterations.h"
#include "measured/kineto_trace.h"
#include "measured/replay_graph.h"
#include "measured/retime.h"
#include "sim/run_stats.h"

namespace tessera::experiments {

struct ReplayResult {
  double measured_s = 0.0;
  double replayed_s = 0.0;
  double measured_gpu_end_s = 0.0;  // last GPU activity's end, from the iteration's start
  double replayed_gpu_end_s = 0.0;
  measured::ReplayStats stats;
  graph::ExecGraph graph;
  sim::RunStats run;
  std::string hardware;     // the profile simulated
  std::string measured_on;  // the profile the trace was measured on ("" unknown)
  std::optional<measured::RetimeFactors> moved;  // set when durations moved between profiles
};

// The shipped profile of a trace's device name ("NVIDIA A100-SXM4-80GB" -> a100-sxm-80gb), or
// "" when none matches: the profiles' own device_names (hw::profile_for_device).
std::string profile_of_device(std::string_view device_name);

// Replays `iteration` on `hardware` ("": the hardware it was measured on). When that differs
// from the measured hardware (`measured_on`, else recognised from the trace's device name;
// base::InputError when neither tells), measured durations move to it (measured::retime).
ReplayResult replay_iteration(const measured::KinetoTrace& t, const measured::IterationSet& set,
                              std::size_t iteration, const std::string& hardware,
                              const std::string& measured_on, const std::string& topology);

}  // namespace tessera::experiments
