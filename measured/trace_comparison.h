// SPDX-License-Identifier: Apache-2.0
// A simulated step next to a measured PyTorch profiler (Kineto) trace, category by category:
// kernel counts and compute time, communication volume per collective, step time and peak
// memory. Rows whose two sides are not the same thing (a measured catch-all against several
// simulated classes, a category only one side has) are kept and marked, never dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "measured/kineto_trace.h"
#include "sim/run_stats.h"

namespace tessera::measured {

struct ComparedSide {
  double count = 0.0;  // per iteration (measured: mean over iterations)
  double time_s = 0.0;
  std::optional<double> bytes;  // communication rows
};

struct ComparedRow {
  std::string section;  // "compute", "communication"
  std::string category;
  ComparedSide measured;
  ComparedSide simulated;
  std::string match;  // "one-to-one", "grouped: ...", "measured only", "simulated only"
};

struct TraceComparison {
  std::string file;
  std::int32_t rank = 0;      // the measured rank
  std::int32_t sim_rank = 0;  // the simulated rank it is compared with
  std::string note;           // how iterations were found, and any rank substitution
  std::size_t iterations = 0;
  std::vector<ComparedRow> rows;
  double measured_step_s = 0.0;
  double simulated_step_s = 0.0;
  std::optional<double> measured_peak;  // absent without memory events
  double simulated_peak = 0.0;
};

// Compares trace `t` with the same rank of a simulated step (rank 0 when the scenario has no
// such rank). Measured values are per-iteration means over the iterations with GPU activity.
TraceComparison compare_trace(const KinetoTrace& t, const graph::ExecGraph& g,
                              const sim::RunStats& stats);

}  // namespace tessera::measured
