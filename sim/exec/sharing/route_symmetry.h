// SPDX-License-Identifier: Apache-2.0
// The check that makes rank-class sharing safe: every rank of a class must see the same
// network as its class representative: each of its groups' rings must cross the same
// multiset of routes, a route being its sequence of link kinds (class, bandwidth,
// efficiency, latency); in pipeline groups the routes to and from its ring neighbours too
// (route_signature.h). The classes may be the graph's rank classes or a refinement of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/exec/sharing/group_classes.h"
#include "sim/exec/sharing/route_signature.h"
#include "topology/cluster.h"

namespace tessera::exec {

// A partition of the ranks into classes, each with the rank that stands for it.
struct RankPartition {
  std::vector<std::int32_t> class_of_rank;  // rank -> class
  std::vector<std::int32_t> rep;            // class -> representative rank
};

// The graph's own rank classes.
RankPartition graph_partition(const graph::ExecGraph& graph);

// Returns "" when every class of `parts` is symmetric, otherwise a sentence naming the first
// rank whose routes differ from its representative's. `classes` are the group classes over
// `parts` (classify_groups). Send/recv routes are covered through the groups that contain
// both ends (pipeline groups, GroupKind::kPP), so the synthesizer should list those groups
// in ExecGraph::groups even when no collective runs on them.
std::string find_asymmetry(const RouteSignatures& sigs, const RankPartition& parts,
                           const GroupClasses& classes);

// The same for the graph's own rank classes, with a fresh signature table.
std::string find_asymmetry(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                           const GroupClasses& classes);

}  // namespace tessera::exec
