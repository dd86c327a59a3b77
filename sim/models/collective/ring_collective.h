// SPDX-License-Identifier: Apache-2.0
// Ring-family collective algorithms as point-to-point flows: which flows a collective puts on
// the network, how many bytes each carries and how many synchronised steps it takes.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "topology/cluster.h"

namespace tessera::models {

// The flow pattern of a collective type: rings (all-reduce, all-gather, reduce-scatter), a
// pipelined chain (broadcast) or direct all-pairs flows (all-to-all).
enum class FlowShape : unsigned char { kRing, kChain, kAllPairs };
constexpr int kNumFlowShapes = 3;
FlowShape flow_shape(graph::CollType c);

struct Flow {
  std::int32_t src = 0;
  std::int32_t dst = 0;
};

// Bytes each flow carries and the number of latency-bound steps, for `n` members, the
// NCCL-convention payload `bytes` (graph::Node::bytes) and `channels` parallel rings:
//   all-reduce            2(n-1) steps, 2(n-1)/n * bytes / channels per flow
//   all-gather / r-scatter (n-1) steps,  (n-1)/n * bytes / channels per flow
//   broadcast             (n-1) steps,  bytes per flow (one pipelined chain)
//   all-to-all            1 step,       bytes / n per flow (every ordered pair)
struct CollectiveCost {
  int steps = 0;
  double bytes_per_flow = 0.0;
};
CollectiveCost collective_cost(graph::CollType c, int n, int channels, double bytes);

// Parallel rings for a group: k when the group spans several nodes with the same k > 1
// members on each (one ring per NIC/rail, as NCCL does), 1 otherwise.
int ring_channels(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster);

// Appends the flows of one group's collective of this shape. Rings: channel c visits the
// nodes in order of first appearance and each node's members rotated by c, so every channel's
// inter-node hop leaves from a different local member; a single channel keeps the group's
// own rank order. Chain: ranks[0] -> ranks[1] -> ... -> ranks[n-1].
void append_flows(FlowShape shape, const std::vector<std::int32_t>& ranks,
                  const topology::Cluster& cluster, std::vector<Flow>& out);

}  // namespace tessera::models
