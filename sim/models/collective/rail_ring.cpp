// SPDX-License-Identifier: Apache-2.0
// Rail-aligned rings (NCCL on rail-optimized fabrics, with PXN): the ring orders of
// ring_order.h, but an inter-node hop whose direct route would cross the fabric above the
// leaves (a spine) goes through the local device on the destination's rail (rail_hops.h):
// the data stays on one rail and never reaches the spine. Costs as the ring. Applies to
// groups that span nodes when at least one hop is realigned.
#include <algorithm>
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/rail_hops.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

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
        if (cluster.node_of(a) != cluster.node_of(b) && rail_proxy(cluster, a, b) != a) {
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
        append_rail_hop(cluster, order[i], order[(i + 1) % order.size()], out);
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
