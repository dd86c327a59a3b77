// SPDX-License-Identifier: Apache-2.0
// The validate step before time starts: the execution graph must be well formed and fit the
// cluster, so that the run itself never meets an out-of-range id.
#pragma once

#include "graph/exec_graph.h"
#include "topology/cluster.h"

namespace tessera::exec {

// Throws base::InputError naming the rank class, node and field at fault: ranks beyond the
// cluster, inconsistent class tables, bad or duplicate group members, dependencies that do
// not precede their node, unknown streams, collectives on a group without the class's
// representative, send/recv peers out of range.
void check_graph(const graph::ExecGraph& graph, const topology::Cluster& cluster);

}  // namespace tessera::exec
