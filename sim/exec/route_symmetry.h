// SPDX-License-Identifier: Apache-2.0
// The check that makes rank-class sharing safe: every rank of a class must see the same
// network as its class representative: each of its groups' rings must cross the same
// multiset of routes, a route being its sequence of link kinds (class, bandwidth,
// efficiency, latency); in pipeline groups the routes to and from its ring neighbours too.
#pragma once

#include <string>

#include "sim/exec/group_classes.h"
#include "synth/graph/exec_graph.h"
#include "topology/cluster.h"

namespace tessera::exec {

// Returns "" when every class is symmetric, otherwise a sentence naming the first rank whose
// routes differ from its representative's. Send/recv routes are covered through the groups
// that contain both ends (pipeline groups, GroupKind::kPP), so the synthesizer should list
// those groups in ExecGraph::groups even when no collective runs on them.
std::string find_asymmetry(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                           const GroupClasses& classes);

}  // namespace tessera::exec
