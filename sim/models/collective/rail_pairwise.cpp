// SPDX-License-Identifier: Apache-2.0
// Rail-aligned all-to-all (NCCL's all-to-all with PXN, NCCL 2.12+; NVIDIA technical blog
// "Doubling all2all Performance with NVIDIA Collective Communication Library 2.12", 2022):
// every ordered pair of members exchanges its bytes / n at once, as pairwise does, but a
// transfer to another node whose direct route would cross the fabric above the leaves first
// moves over the scale-up network to the sender's node-mate on the destination's rail
// (rail_hops.h), which sends it over its own NIC. Each NIC then carries the traffic of all
// its node-mates to its own rail, and none of it reaches the spine. One step, bytes / n per
// flow. Applies to groups that span nodes when at least one transfer is realigned.
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/rail_hops.h"

namespace tessera::models {

namespace {

class RailPairwise final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "rail_pairwise"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllToAll;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& /*profile*/) const override {
    for (std::int32_t s : ranks) {
      for (std::int32_t d : ranks) {
        if (cluster.node_of(s) != cluster.node_of(d) && rail_proxy(cluster, s, d) != s) {
          return true;
        }
      }
    }
    return false;
  }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    for (std::int32_t s : ranks) {
      for (std::int32_t d : ranks) {
        if (s != d) {
          append_rail_hop(cluster, s, d, out);
        }
      }
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{1, bytes / static_cast<double>(n)};
  }
};

}  // namespace

void register_rail_pairwise(CollectiveRegistry& registry) {
  registry.add(std::make_unique<RailPairwise>());
}

}  // namespace tessera::models
