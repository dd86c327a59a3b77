// SPDX-License-Identifier: Apache-2.0
#include "sim/models/collective/ring_order.h"

#include <algorithm>
#include <cstddef>

namespace tessera::models {

std::vector<std::vector<std::int32_t>> members_by_node(const std::vector<std::int32_t>& ranks,
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

int ring_count(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster) {
  auto nodes = members_by_node(ranks, cluster);
  if (nodes.size() < 2) {
    return 1;
  }
  const std::size_t k = nodes.front().size();
  bool uniform = std::all_of(nodes.begin(), nodes.end(),
                             [k](const auto& members) { return members.size() == k; });
  return uniform && k > 1 ? static_cast<int>(k) : 1;
}

std::vector<std::vector<std::int32_t>> ring_orders(const std::vector<std::int32_t>& ranks,
                                                   const topology::Cluster& cluster) {
  if (ranks.size() < 2) {
    return {};
  }
  const int rings = ring_count(ranks, cluster);
  if (rings == 1) {
    return {ranks};
  }
  auto nodes = members_by_node(ranks, cluster);
  const auto k = static_cast<std::size_t>(rings);
  std::vector<std::vector<std::int32_t>> out(k);
  for (std::size_t c = 0; c < k; ++c) {
    for (const auto& members : nodes) {
      for (std::size_t j = 0; j < k; ++j) {
        out[c].push_back(members[(j + c) % k]);
      }
    }
  }
  return out;
}

CollectiveCost ring_cost(graph::CollType c, int n, int channels, double bytes) {
  if (n <= 1) {
    return {};
  }
  const double nd = n;
  const double k = std::max(channels, 1);
  // The last step copies the received chunk into the output (read + write), or for
  // reduce-scatter reduces it with the member's own input into the output (2 reads + write).
  const double local = (c == graph::CollType::kReduceScatter ? 3.0 : 2.0) * bytes / nd;
  if (c == graph::CollType::kAllReduce) {
    return {2 * (n - 1), 2.0 * (nd - 1.0) / nd * bytes / k, local};
  }
  return {n - 1, (nd - 1.0) / nd * bytes / k, local};
}

bool within_one_node(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster) {
  return std::all_of(ranks.begin(), ranks.end(), [&](std::int32_t r) {
    return cluster.node_of(r) == cluster.node_of(ranks.front());
  });
}

}  // namespace tessera::models
