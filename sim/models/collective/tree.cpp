// SPDX-License-Identifier: Apache-2.0
// Tree all-reduce across nodes (NCCL's double binary tree, NCCL_ALGO=Tree): inside a node the
// members form a chain; across nodes two complementary binary trees each reduce half of the
// data up and broadcast it down, pipelined, so both directions of every tree edge run at
// once. Tree 0 is heap-shaped over the nodes in order (parent of i is (i-1)/2), tree 1 the
// same over the nodes in reverse, so the interior nodes of one are leaves of the other and
// every node sends and receives about the same. With k members per node the pattern runs k
// times (channel c uses every node's c-th member: one rail per channel, no spine).
//   2(k - 1 + ceil(log2 nodes)) steps (up and down), bytes / (2k) per flow
// NCCL's model keeps 0.92 of the tree's bus bandwidth for all-reduce and 0.85 of that for a
// plain tree pattern (src/graph/tuning.cc, NCCL 2.28); the protocol's fraction is scaled by
// both. Applies to all-reduce over two or more nodes with the same k members on each.
#include <algorithm>
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

constexpr double kTreeBandwidth = 0.92 * 0.85;

int ceil_log2(int v) {
  int d = 0;
  while ((1 << d) < v) {
    ++d;
  }
  return d;
}

void both_ways(std::int32_t a, std::int32_t b, std::vector<Flow>& out) {
  out.push_back({a, b});
  out.push_back({b, a});
}

// The edges of tree `t` between the c-th members of the nodes.
void append_tree(const std::vector<std::vector<std::int32_t>>& nodes, std::size_t c, int t,
                 std::vector<Flow>& out) {
  const std::size_t n = nodes.size();
  auto at = [&](std::size_t pos) { return t == 0 ? pos : n - 1 - pos; };
  for (std::size_t i = 1; i < n; ++i) {
    both_ways(nodes[at((i - 1) / 2)][c], nodes[at(i)][c], out);
  }
}

class Tree final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "tree"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& /*profile*/) const override {
    auto nodes = members_by_node(ranks, cluster);
    if (nodes.size() < 2) {
      return false;
    }
    const std::size_t k = nodes.front().size();
    return std::all_of(nodes.begin(), nodes.end(),
                       [k](const auto& members) { return members.size() == k; });
  }

  [[nodiscard]] bool uses(Protocol /*p*/) const override { return true; }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster) const override {
    return static_cast<int>(members_by_node(ranks, cluster).front().size());
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    auto nodes = members_by_node(ranks, cluster);
    const std::size_t k = nodes.front().size();
    for (std::size_t c = 0; c < k; ++c) {
      for (const auto& members : nodes) {  // the chain inside each node, from member c
        for (std::size_t j = 0; j + 1 < k; ++j) {
          both_ways(members[(c + j) % k], members[(c + j + 1) % k], out);
        }
      }
      append_tree(nodes, c, 0, out);
      append_tree(nodes, c, 1, out);
    }
  }

  [[nodiscard]] double bandwidth_fraction(const hw::Profile& profile, Protocol p) const override {
    return protocol_spec(profile, p).bandwidth * kTreeBandwidth;
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int channels,
                                    double bytes) const override {
    if (n <= 1) {
      return {};
    }
    const int k = std::max(channels, 1);
    const int nodes = std::max(n / k, 2);
    return {2 * (k - 1 + ceil_log2(nodes)), bytes / (2.0 * k)};
  }
};

}  // namespace

void register_tree(CollectiveRegistry& registry) {
  registry.add(std::make_unique<Tree>());
}

}  // namespace tessera::models
