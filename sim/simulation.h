// SPDX-License-Identifier: Apache-2.0
// Entry point of the simulator: times one step's ExecGraph on a cluster built from a
// hardware profile and a topology, and returns the statistics the reports are made from.
#pragma once

#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/models/effects.h"
#include "sim/run_stats.h"
#include "topology/cluster.h"

namespace tessera::sim {

inline constexpr std::size_t kDefaultTimelineRanks = 16;

struct SimOptions {
  bool record_timeline = false;  // fill RunStats::spans
  // The ranks whose spans and memory are recorded; empty: the simulated instances'
  // representatives, at most kDefaultTimelineRanks of them (each pipeline stage's first).
  std::vector<std::int32_t> timeline_ranks;
  // Simulate one instance per rank class (ExecGraph::classes) when the ranks of a class also
  // see identical network conditions; off: every rank is simulated on its own.
  bool share_rank_classes = true;
  base::DType dtype = base::DType::kBF16;  // the step's compute precision (for peak FLOP/s)
  // Sends complete on delivery without waiting for their recv (ASTRA-sim's semantics, for
  // imported traces); off: NCCL-style rendezvous.
  bool eager_sends = false;
  // The timing models, by registered name (sim/models/compute/compute_model.h,
  // sim/models/network/network_model.h).
  std::string compute_model = "roofline";
  std::string network_model = "max-min";
  // Modelled effects switched off (sim/models/effects.h); empty: all on. The collective
  // model reads "collective-tuner" and "rail-alignment" (sim/models/collective/tuner.h).
  models::Effects effects;
  // Stop the step at the first instant a rank holds more than this many bytes, throwing
  // MemoryLimit (a search's points that cannot fit need no step time); 0: never.
  double stop_above_memory = 0.0;
};

// Throws base::SimulationError when the step cannot finish (a deadlock, with which node
// waits on what), base::InputError when the graph does not fit the cluster.
RunStats simulate(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                  const hw::Profile& profile, const SimOptions& options);

}  // namespace tessera::sim
