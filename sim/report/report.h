// SPDX-License-Identifier: Apache-2.0
// Turns RunStats into what people read: the console summary, summary.json, ranks.csv and a
// Chrome/Perfetto timeline.json. Knows nothing about scenarios beyond the labels it is given.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/exec_graph.h"
#include "sim/run_stats.h"

namespace tessera::sim::report {

// Names for the headline, supplied by the caller.
struct RunLabel {
  std::string scenario;
  std::string model;
  std::string hardware;
  std::string topology;
  std::string parallelism;  // "TP8 PP8 DP16 SP"
  std::string schedule;
  std::int64_t devices = 0;
  std::int64_t microbatches = 0;
};

// Derived figures; the breakdown is the mean over ranks, so its parts add up to the step.
struct Metrics {
  double mfu = 0.0;
  double hfu = 0.0;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_device = 0.0;
  double compute_s = 0.0;
  std::array<double, graph::kNumOpClasses> compute_by_class_s{};  // kernel time per op class
  std::array<double, graph::kNumGroupKinds> exposed_comm_s{};
  double idle_s = 0.0;
  double peak_hbm = 0.0;
  std::int32_t peak_rank = 0;
  bool oom = false;
};

Metrics compute_metrics(const graph::ExecGraph& g, const RunStats& r, std::int64_t devices);

void print_summary(std::ostream& out, const RunLabel& label, const graph::ExecGraph& g,
                   const RunStats& r, const Metrics& m);
nlohmann::json summary_json(const RunLabel& label, const graph::ExecGraph& g, const RunStats& r,
                            const Metrics& m);
void write_ranks_csv(const std::string& path, const RunStats& r);
// Chrome trace-event JSON: pid = rank, tid = stream, microsecond timestamps.
void write_timeline(const std::string& path, const graph::ExecGraph& g, const RunStats& r);

}  // namespace tessera::sim::report
