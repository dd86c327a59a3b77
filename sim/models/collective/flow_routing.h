// SPDX-License-Identifier: Apache-2.0
// Turns point-to-point flows into the link loads the network model needs: how many flows
// cross each link, and the slowest flow's path latency.
#pragma once

#include <cstdint>
#include <vector>

#include "base/units.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/network/path_table.h"
#include "topology/cluster.h"

namespace tessera::models {

// The load a set of flows puts on the network.
struct RoutedLoad {
  std::vector<LinkUse> uses;      // (link, flows crossing it), sorted by link
  base::SimTime max_latency = 0;  // the slowest flow's path latency
};

// Accumulates flows; a flow from a device to itself loads nothing.
class FlowRouter {
 public:
  explicit FlowRouter(const topology::Cluster& cluster);
  void add(const Flow& f);
  void add(const std::vector<Flow>& flows);
  RoutedLoad take();  // the load so far; resets the router

 private:
  const topology::Cluster& cluster_;
  std::vector<std::int32_t> count_;    // per link
  std::vector<std::int32_t> touched_;  // links with count > 0
  base::SimTime max_latency_ = 0;
};

// Link capacities for the network model: bandwidth * efficiency, in bytes per picosecond.
std::vector<double> link_capacities(const topology::Cluster& cluster);

}  // namespace tessera::models
