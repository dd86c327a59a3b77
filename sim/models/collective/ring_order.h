// SPDX-License-Identifier: Apache-2.0
// The member orders of NCCL-style rings, shared by the ring and rail-aligned ring algorithms:
// a group spanning several nodes with the same k > 1 members on each runs k rings (one per
// NIC/rail); ring c visits the nodes in order of first appearance and each node's members
// rotated by c, so every ring's inter-node hop leaves from a different local member. Any
// other group runs one ring in its own rank order.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/models/collective/algorithm.h"
#include "topology/cluster.h"

namespace tessera::models {

// Members grouped by node, nodes in order of first appearance, members in group order.
std::vector<std::vector<std::int32_t>> members_by_node(const std::vector<std::int32_t>& ranks,
                                                       const topology::Cluster& cluster);

// How many rings the group runs (>= 1).
int ring_count(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster);

// The member order of each ring (ring_count() of them; empty for fewer than two members).
std::vector<std::vector<std::int32_t>> ring_orders(const std::vector<std::int32_t>& ranks,
                                                   const topology::Cluster& cluster);

// The ring's cost (ring.cpp's header), shared by the ring and the rail-aligned ring.
CollectiveCost ring_cost(graph::CollType c, int n, int channels, double bytes);

// True when every member of the group sits in one node.
bool within_one_node(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster);

}  // namespace tessera::models
