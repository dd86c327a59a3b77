// SPDX-License-Identifier: Apache-2.0
// Rewrites a rank class graph (written with its representative's group ids and peers) into
// another member rank's own ids, for runs that simulate every rank of a shared class.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/exec/sharing/group_classes.h"
#include "sim/exec/sharing/sharing_plan.h"

namespace tessera::exec {

// The groups and peers a class graph refers to, ascending.
struct ClassRefs {
  std::vector<std::int32_t> groups;
  std::vector<std::int32_t> peers;
};
ClassRefs class_refs(const graph::RankGraph& g);

// Indices into refs.peers of the peers the class graph sends to, ascending.
std::vector<std::int32_t> send_peers(const graph::RankGraph& g, const ClassRefs& refs);

// Contract: a representative gets identity maps. For another rank, the representative's k-th
// group of a group class maps to the rank's k-th group of that class (groups in id order);
// a peer p maps through a group G holding both the representative and p (pipeline groups
// first): to the member at the same ring offset from the rank as p is from the
// representative. Throws base::InputError when the rank's groups do not correspond or no
// group links a peer.
InstanceSpec relabel_instance(const graph::ExecGraph& graph, const GroupClasses& classes,
                              const ClassRefs& refs, std::int32_t rank);

// The same relabelling in compact form: `rank`'s own group for each of refs.groups and its
// own peer for each of refs.peers, in refs order (the identity for the representative).
ClassRefs map_refs(const graph::ExecGraph& graph, const GroupClasses& classes,
                   const ClassRefs& refs, std::int32_t rank);

}  // namespace tessera::exec
