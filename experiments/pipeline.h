// SPDX-License-Identifier: Apache-2.0
// The end-to-end path every command shares: scenario -> profile and cluster -> synthesized
// graphs -> simulation -> metrics, with the time each stage took; the same for a graph read
// from elsewhere (Chakra traces); and the reports a run writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/report/config_fields.h"
#include "sim/report/report.h"
#include "sim/run_stats.h"
#include "sim/simulation.h"
#include "synth/scenario/scenario.h"
#include "topology/cluster.h"

namespace tessera::experiments {

struct Outcome {
  graph::ExecGraph graph;
  sim::RunStats stats;
  sim::report::Metrics metrics;
  sim::report::RunLabel label;
  double load_s = 0.0;
  double synth_s = 0.0;
  double sim_s = 0.0;
};

// How simulate_scenario runs: `share` simulates one instance per rank class, `timeline`
// records the spans (for timeline.json.gz and analyses that read them) of `timeline_ranks`
// (empty: the default pick, sim::SimOptions::timeline_ranks), with the modelled `effects`
// (default: all on).
struct RunOptions {
  bool share = true;
  bool timeline = false;
  std::vector<std::int32_t> timeline_ranks;
  models::Effects effects;
  // > 0: the step stops where a rank first holds more bytes (sim::MemoryLimit).
  double stop_above_memory = 0.0;
  // A cluster built for the scenario's topology, profile and devices, reused across runs (its
  // routes are cached: one per thread); null: one is built for the run.
  const topology::Cluster* cluster = nullptr;
  // Under skewed MoE routing, also simulate the balanced twin (metrics.balanced_step_s).
  bool balanced_twin = true;
};

// Synthesizes and simulates `s`.
Outcome simulate_scenario(const synth::Scenario& s, const RunOptions& run);
// The same with RunOptions{share, timeline, timeline_ranks, effects}.
Outcome simulate_scenario(const synth::Scenario& s, bool share, bool timeline,
                          const std::vector<std::int32_t>& timeline_ranks = {},
                          const models::Effects& effects = {});

// Simulates a graph that was not synthesized here (Chakra traces) on a cluster of its ranks
// built from `topology`, under `label`; the metrics count one device per rank.
Outcome simulate_graph(graph::ExecGraph g, const hw::Profile& profile,
                       const topology::TopologySpec& topology, const sim::SimOptions& opt,
                       sim::report::RunLabel label);

std::string parallelism_label(const synth::Scenario& s);

// The configuration of `s` as named fields (sim/report/config_fields.h), as summary.json has
// them, without running it: for tables with one run per row (compare.csv, sweep.csv).
std::vector<sim::report::ConfigField> scenario_config(const synth::Scenario& s);

// summary<suffix>.json, ranks<suffix>.csv and timeline<suffix>.json.gz in `dir` (made if absent).
void write_reports(const std::string& dir, const Outcome& o, const std::string& suffix = "");

// summary<suffix>.json and ranks<suffix>.csv only (a run recorded without a timeline).
void write_run_summary(const std::string& dir, const Outcome& o, const std::string& suffix);

}  // namespace tessera::experiments
