// SPDX-License-Identifier: Apache-2.0
// Rail-aligned rings (NCCL on rail-optimized fabrics, with PXN): the ring orders of
// ring_order.h, but an inter-node hop whose direct route would cross the fabric above the
// leaves (a spine) first moves over the scale-up network to the local device on the
// destination's rail, which sends it over its own NIC to the destination: the data stays
// on one rail and never reaches the spine. Costs as the ring. Applies to groups that span
// nodes when at least one hop is realigned.
#include <algorithm>
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

bool crosses_fabric(const topology::Cluster& cluster, std::int32_t src, std::int32_t dst) {
  const auto& route = cluster.route(src, dst);
  return std::any_of(route.begin(), route.end(), [&](topology::LinkId l) {
    return cluster.link(l).cls == topology::LinkClass::kFabric;
  });
}

// The device in src's node on dst's rail (same local index), when using it keeps the hop off
// the fabric; otherwise src itself.
std::int32_t proxy_for(const topology::Cluster& cluster, std::int32_t src, std::int32_t dst) {
  const int per_node = cluster.devices_per_node();
  const std::int32_t proxy = cluster.node_of(src) * per_node + dst % per_node;
  if (proxy == src || proxy >= cluster.num_devices() || !crosses_fabric(cluster, src, dst) ||
      crosses_fabric(cluster, proxy, dst)) {
    return src;
  }
  return proxy;
}

void append_hop(const topology::Cluster& cluster, std::int32_t a, std::int32_t b,
                std::vector<Flow>& out) {
  if (cluster.node_of(a) == cluster.node_of(b)) {
    out.push_back({a, b});
    return;
  }
  const std::int32_t proxy = proxy_for(cluster, a, b);
  if (proxy != a) {
    out.push_back({a, proxy});
  }
  out.push_back({proxy, b});
}

class RailRing final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "rail_ring"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce || c == graph::CollType::kAllGather ||
           c == graph::CollType::kReduceScatter;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& /*profile*/) const override {
    for (const auto& order : ring_orders(ranks, cluster)) {
      for (std::size_t i = 0; i < order.size(); ++i) {
        std::int32_t a = order[i];
        std::int32_t b = order[(i + 1) % order.size()];
        if (cluster.node_of(a) != cluster.node_of(b) && proxy_for(cluster, a, b) != a) {
          return true;
        }
      }
    }
    return false;
  }

  [[nodiscard]] bool uses(Protocol /*p*/) const override { return true; }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster) const override {
    return ring_count(ranks, cluster);
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    for (const auto& order : ring_orders(ranks, cluster)) {
      for (std::size_t i = 0; i < order.size(); ++i) {
        append_hop(cluster, order[i], order[(i + 1) % order.size()], out);
      }
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType c, int n, int channels,
                                    double bytes) const override {
    return ring_cost(c, n, channels, bytes);
  }
};

}  // namespace

void register_rail_ring(CollectiveRegistry& registry) {
  registry.add(std::make_unique<RailRing>());
}

}  // namespace tessera::models
