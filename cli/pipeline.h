// SPDX-License-Identifier: Apache-2.0
// The end-to-end path every command shares: scenario -> profile and cluster -> synthesized
// graphs -> simulation -> metrics, with the time each stage took.
#pragma once

#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/report/report.h"
#include "sim/run_stats.h"
#include "synth/scenario/scenario.h"

namespace tessera::cli {

struct Outcome {
  graph::ExecGraph graph;
  sim::RunStats stats;
  sim::report::Metrics metrics;
  sim::report::RunLabel label;
  double load_s = 0.0;
  double synth_s = 0.0;
  double sim_s = 0.0;
};

Outcome simulate_scenario(const synth::Scenario& s, bool share, bool timeline,
                          const std::vector<std::int32_t>& timeline_ranks = {});
std::string parallelism_label(const synth::Scenario& s);
void write_reports(const std::string& dir, const Outcome& o, const std::string& suffix = "");

}  // namespace tessera::cli
