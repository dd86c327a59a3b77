// SPDX-License-Identifier: Apache-2.0
// Replaying one measured iteration of a Kineto trace through the simulator.
#pragma once

#include <cstddef>
#include <string>

#include "sim/run_stats.h"
#include "synth/graph/exec_graph.h"
#include "synth/graph/kineto/iterations.h"
#include "synth/graph/kineto/kineto_trace.h"
#include "synth/graph/kineto/replay_graph.h"

namespace tessera::cli {

struct ReplayResult {
  double measured_s = 0.0;
  double replayed_s = 0.0;
  double measured_gpu_end_s = 0.0;  // last GPU activity's end, from the iteration's start
  double replayed_gpu_end_s = 0.0;
  graph::kineto::ReplayStats stats;
  graph::ExecGraph graph;
  sim::RunStats run;
  std::string hardware;
};

ReplayResult replay_iteration(const graph::kineto::KinetoTrace& t,
                              const graph::kineto::IterationSet& set, std::size_t iteration,
                              const std::string& hardware, const std::string& topology,
                              bool timeline = false);

}  // namespace tessera::cli
