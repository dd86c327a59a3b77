// SPDX-License-Identifier: Apache-2.0
// Ring all-reduce, all-gather and reduce-scatter (NCCL's ring algorithm): every member sends
// to the next, in the orders of ring_order.h (one ring per rail when the group spans nodes
// with the same k > 1 members on each). Each inter-node hop goes straight from the ring's
// last member in a node to the first in the next, whatever rails they sit on (rail_ring.cpp
// keeps it on one rail). Runs LL, LL128 and Simple.
//   all-reduce             2(n-1) steps, 2(n-1)/n * bytes / channels per flow
//   all-gather / r-scatter  (n-1) steps,  (n-1)/n * bytes / channels per flow
// and, in both, a last step per loop that sends nothing (NCCL src/device/all_gather.h,
// reduce_scatter.h, all_reduce.h): each member copies the bytes / n it received last into
// its output, or (reduce-scatter) reduces them with its own input: 2 or 3 x bytes / n of HBM
// traffic while its links idle (CollectiveCost::local_traffic).
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

void append_ring(const std::vector<std::int32_t>& order, std::vector<Flow>& out) {
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back({order[i], order[(i + 1) % n]});
  }
}

class Ring final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "ring"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce || c == graph::CollType::kAllGather ||
           c == graph::CollType::kReduceScatter;
  }

  [[nodiscard]] bool uses(Protocol /*p*/) const override { return true; }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster) const override {
    return ring_count(ranks, cluster);
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    for (const auto& order : ring_orders(ranks, cluster)) {
      append_ring(order, out);
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType c, int n, int channels,
                                    double bytes) const override {
    return ring_cost(c, n, channels, bytes);
  }
};

}  // namespace

void register_ring(CollectiveRegistry& registry) {
  registry.add(std::make_unique<Ring>());
}

}  // namespace tessera::models
