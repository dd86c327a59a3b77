// SPDX-License-Identifier: Apache-2.0
#include "sim/models/collective/ring_collective.h"

#include <algorithm>
#include <cstddef>

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

}  // namespace

FlowShape flow_shape(graph::CollType c) {
  switch (c) {
    case graph::CollType::kBroadcast:
      return FlowShape::kChain;
    case graph::CollType::kAllToAll:
      return FlowShape::kAllPairs;
    default:
      return FlowShape::kRing;
  }
}

CollectiveCost collective_cost(graph::CollType c, int n, int channels, double bytes) {
  if (n <= 1) {
    return {};
  }
  const double nd = n;
  const double k = std::max(channels, 1);
  switch (c) {
    case graph::CollType::kAllReduce:
      return {2 * (n - 1), 2.0 * (nd - 1.0) / nd * bytes / k};
    case graph::CollType::kAllGather:
    case graph::CollType::kReduceScatter:
      return {n - 1, (nd - 1.0) / nd * bytes / k};
    case graph::CollType::kBroadcast:
      return {n - 1, bytes};
    case graph::CollType::kAllToAll:
      return {1, bytes / nd};
  }
  return {};
}

int ring_channels(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster) {
  auto nodes = by_node(ranks, cluster);
  if (nodes.size() < 2) {
    return 1;
  }
  const std::size_t k = nodes.front().size();
  bool uniform = std::all_of(nodes.begin(), nodes.end(),
                             [k](const auto& members) { return members.size() == k; });
  return uniform && k > 1 ? static_cast<int>(k) : 1;
}

void append_flows(FlowShape shape, const std::vector<std::int32_t>& ranks,
                  const topology::Cluster& cluster, std::vector<Flow>& out) {
  const std::size_t n = ranks.size();
  if (n < 2) {
    return;
  }
  if (shape == FlowShape::kChain) {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      out.push_back({ranks[i], ranks[i + 1]});
    }
  } else if (shape == FlowShape::kAllPairs) {
    for (std::int32_t s : ranks) {
      for (std::int32_t d : ranks) {
        if (s != d) {
          out.push_back({s, d});
        }
      }
    }
  } else if (ring_channels(ranks, cluster) == 1) {
    append_ring(ranks, out);
  } else {
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
}

}  // namespace tessera::models
