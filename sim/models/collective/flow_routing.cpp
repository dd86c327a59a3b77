// SPDX-License-Identifier: Apache-2.0
#include "sim/models/collective/flow_routing.h"

#include <algorithm>
#include <cstddef>

namespace tessera::models {

FlowRouter::FlowRouter(const topology::Cluster& cluster)
    : cluster_(cluster), count_(cluster.num_links(), 0) {}

void FlowRouter::add(const Flow& f) {
  if (f.src == f.dst) {
    return;
  }
  for (topology::LinkId l : cluster_.route(f.src, f.dst)) {
    auto i = static_cast<std::size_t>(l);
    if (count_[i]++ == 0) {
      touched_.push_back(l);
    }
  }
  max_latency_ = std::max(max_latency_, cluster_.path_latency(f.src, f.dst));
}

void FlowRouter::add(const std::vector<Flow>& flows) {
  for (const Flow& f : flows) {
    add(f);
  }
}

RoutedLoad FlowRouter::take() {
  std::sort(touched_.begin(), touched_.end());
  RoutedLoad load;
  load.uses.reserve(touched_.size());
  for (std::int32_t l : touched_) {
    load.uses.push_back({l, count_[static_cast<std::size_t>(l)]});
    count_[static_cast<std::size_t>(l)] = 0;
  }
  load.max_latency = max_latency_;
  touched_.clear();
  max_latency_ = 0;
  return load;
}

std::vector<double> link_capacities(const topology::Cluster& cluster) {
  std::vector<double> cap(cluster.num_links());
  for (std::size_t l = 0; l < cap.size(); ++l) {
    const topology::Link& link = cluster.link(static_cast<topology::LinkId>(l));
    cap[l] = link.bandwidth * link.efficiency / static_cast<double>(base::kPsPerSecond);
  }
  return cap;
}

}  // namespace tessera::models
