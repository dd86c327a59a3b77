// SPDX-License-Identifier: Apache-2.0
// Turns RunStats into what people read: the console summary, summary.json, ranks.csv and a
// Chrome/Perfetto timeline.json. Knows nothing about scenarios beyond the labels it is given.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/exec_graph.h"
#include "sim/report/rank_list.h"
#include "sim/report/run_label.h"
#include "sim/report/timeline.h"
#include "sim/run_stats.h"

namespace tessera::sim::report {

// Derived figures; the breakdown is the mean over ranks, so its parts add up to the step.
struct Metrics {
  double mfu = 0.0;         // attention counted in full, causal mask or not (Megatron's convention)
  double mfu_causal = 0.0;  // causally masked attention counted half (what the kernel computes)
  double hfu = 0.0;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_device = 0.0;
  double compute_s = 0.0;
  std::array<double, graph::kNumOpClasses> compute_by_class_s{};  // kernel time per op class
  std::array<double, graph::kNumGroupKinds> exposed_comm_s{};
  // Mean over ranks of the time each kind's communication is in flight, hidden or not.
  std::array<double, graph::kNumGroupKinds> comm_s{};
  double host_wait_s = 0.0;  // the device idle, waiting for the host to issue (RankStats)
  double idle_s = 0.0;
  double peak_hbm = 0.0;
  std::int32_t peak_rank = 0;
  MemoryBreakdown peak_breakdown;  // peak_rank's peak by what holds it
  // Mean over ranks of the bytes a rank sends per group kind (RankStats::sent_bytes).
  std::array<double, graph::kNumGroupKinds> comm_bytes{};
  bool oom = false;
  // Skewed MoE routing: the same step's time with balanced routing (0: not simulated).
  double balanced_step_s = 0.0;
};

Metrics compute_metrics(const graph::ExecGraph& g, const RunStats& r, std::int64_t devices);

void print_summary(std::ostream& out, const RunLabel& label, const graph::ExecGraph& g,
                   const RunStats& r, const Metrics& m);
nlohmann::json summary_json(const RunLabel& label, const graph::ExecGraph& g, const RunStats& r,
                            const Metrics& m);
void write_ranks_csv(const std::string& path, const RunStats& r);

}  // namespace tessera::sim::report
