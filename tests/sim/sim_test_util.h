// SPDX-License-Identifier: Apache-2.0
// Hand-made profiles, clusters and graphs for the simulator tests, so that no test depends on
// the numbers in the shipped YAML files.
#pragma once

#include <string>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/simulation.h"
#include "topology/cluster.h"

namespace tessera::simtest {

// 1 PFLOP/s bf16, 2 TB/s HBM at full efficiency, 100 GB/s scale-up and 50 GB/s scale-out
// with zero latency and full efficiency, no launch or protocol costs, 8 devices per node.
hw::Profile test_profile();

topology::Cluster make_cluster(const hw::Profile& p, int devices, int devices_per_node = 8);

graph::Node compute(graph::ExecGraph& g, const std::string& name, base::SimTime duration);
graph::Node collective(graph::ExecGraph& g, const std::string& name, std::int32_t group,
                       graph::CollType type, double bytes, graph::Stream s = graph::Stream::kTP);
graph::Node send(graph::ExecGraph& g, const std::string& name, std::int32_t peer, std::int64_t tag,
                 double bytes = 0.0);
graph::Node recv(graph::ExecGraph& g, const std::string& name, std::int32_t peer, std::int64_t tag,
                 double bytes = 0.0);

// One rank's memory walk: static 100 bytes, then nodes a (+50), b (+30, then -80) and c
// (+60, then -60), 1 ps each; the peak, 180, is at b's start.
graph::RankGraph memory_walk(graph::ExecGraph& g);

// Installs one class per rank: rank r runs graphs[r].
void set_per_rank(graph::ExecGraph& g, std::vector<graph::RankGraph> graphs);

sim::RunStats run(const graph::ExecGraph& g, const topology::Cluster& c, const hw::Profile& p,
                  bool timeline = true, bool share = true);

// The span of the node called `name` on `rank` (fails the test when there is none).
sim::Span span_of(const sim::RunStats& stats, const graph::ExecGraph& g, std::int32_t rank,
                  const std::string& name);

}  // namespace tessera::simtest
