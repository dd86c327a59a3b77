// SPDX-License-Identifier: Apache-2.0
// Ring all-reduce, all-gather and reduce-scatter (NCCL's ring algorithm): every member sends
// to the next. A group spanning several nodes with the same k > 1 members on each runs k
// rings, one per NIC/rail, as NCCL does; channel c visits the nodes in order of first
// appearance and each node's members rotated by c, so every channel's inter-node hop leaves
// from a different local member. A single ring keeps the group's own rank order.
//   all-reduce             2(n-1) steps, 2(n-1)/n * bytes / channels per flow
//   all-gather / r-scatter  (n-1) steps,  (n-1)/n * bytes / channels per flow
#include <algorithm>
#include <memory>

#include "sim/models/collective/algorithm.h"

namespace tessera::models {

namespace {

// Members grouped by node, nodes in order of first appearance, members in group order.
std::vector<std::vector<std::int32_t>> by_node(const std::vector<std::int32_t>& ranks,
                                               const topology::Cluster& cluster) {
  std::vector<int> node_ids;
  std::vector<std::vector<std::int32_t>> groups;
  for (std::int32_t r : ranks) {
    int node = cluster.node_of(r);
    auto it = std::find(node_ids.begin(), node_ids.end(), node);
    if (it == node_ids.end()) {
      node_ids.push_back(node);
      groups.push_back({r});
    } else {
      groups[static_cast<std::size_t>(it - node_ids.begin())].push_back(r);
    }
  }
  return groups;
}

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

  [[nodiscard]] int channels(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster) const override {
    auto nodes = by_node(ranks, cluster);
    if (nodes.size() < 2) {
      return 1;
    }
    const std::size_t k = nodes.front().size();
    bool uniform = std::all_of(nodes.begin(), nodes.end(),
                               [k](const auto& members) { return members.size() == k; });
    return uniform && k > 1 ? static_cast<int>(k) : 1;
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    if (ranks.size() < 2) {
      return;
    }
    if (channels(ranks, cluster) == 1) {
      append_ring(ranks, out);
      return;
    }
    auto nodes = by_node(ranks, cluster);
    const std::size_t k = nodes.front().size();
    std::vector<std::int32_t> order;
    for (std::size_t c = 0; c < k; ++c) {
      order.clear();
      for (const auto& members : nodes) {
        for (std::size_t j = 0; j < k; ++j) {
          order.push_back(members[(j + c) % k]);
        }
      }
      append_ring(order, out);
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType c, int n, int channels,
                                    double bytes) const override {
    if (n <= 1) {
      return {};
    }
    const double nd = n;
    const double k = std::max(channels, 1);
    if (c == graph::CollType::kAllReduce) {
      return {2 * (n - 1), 2.0 * (nd - 1.0) / nd * bytes / k};
    }
    return {n - 1, (nd - 1.0) / nd * bytes / k};
  }
};

}  // namespace

void register_ring(CollectiveRegistry& registry) {
  registry.add(std::make_unique<Ring>());
}

}  // namespace tessera::models
