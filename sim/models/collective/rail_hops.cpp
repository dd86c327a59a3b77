// SPDX-License-Identifier: Apache-2.0
#include "sim/models/collective/rail_hops.h"

#include <algorithm>

namespace tessera::models {

namespace {

bool crosses_fabric(const topology::Cluster& cluster, std::int32_t src, std::int32_t dst) {
  const auto& route = cluster.route(src, dst);
  return std::any_of(route.begin(), route.end(), [&](topology::LinkId l) {
    return cluster.link(l).cls == topology::LinkClass::kFabric;
  });
}

}  // namespace

std::int32_t rail_proxy(const topology::Cluster& cluster, std::int32_t src, std::int32_t dst) {
  const int per_node = cluster.devices_per_node();
  const std::int32_t proxy = cluster.node_of(src) * per_node + dst % per_node;
  if (proxy == src || proxy >= cluster.num_devices() || !crosses_fabric(cluster, src, dst) ||
      crosses_fabric(cluster, proxy, dst)) {
    return src;
  }
  return proxy;
}

void append_rail_hop(const topology::Cluster& cluster, std::int32_t a, std::int32_t b,
                     std::vector<Flow>& out) {
  if (cluster.node_of(a) == cluster.node_of(b)) {
    out.push_back({a, b});
    return;
  }
  const std::int32_t proxy = rail_proxy(cluster, a, b);
  if (proxy != a) {
    out.push_back({a, proxy});
  }
  out.push_back({proxy, b});
}

}  // namespace tessera::models
