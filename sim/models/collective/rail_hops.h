// SPDX-License-Identifier: Apache-2.0
// Rail alignment as NCCL does it with PXN (NCCL 2.12+, NCCL_PXN_DISABLE; NVIDIA technical
// blog "Doubling all2all Performance with NVIDIA Collective Communication Library 2.12",
// 2022): a transfer between nodes whose direct route would cross the fabric above the
// leaves (a spine) first moves over the scale-up network to the device of its own node on
// the destination's rail (the same local index), which sends it over its own NIC, so the
// data stays on one rail. Shared by the rail-aligned ring and the rail-aligned all-to-all.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/models/collective/algorithm.h"
#include "topology/cluster.h"

namespace tessera::models {

// The device in src's node on dst's rail when sending through it keeps the transfer off
// the fabric; otherwise src itself.
std::int32_t rail_proxy(const topology::Cluster& cluster, std::int32_t src, std::int32_t dst);

// The flows that carry a transfer from a to b: a -> b, or a -> proxy -> b across nodes.
void append_rail_hop(const topology::Cluster& cluster, std::int32_t a, std::int32_t b,
                     std::vector<Flow>& out);

}  // namespace tessera::models
