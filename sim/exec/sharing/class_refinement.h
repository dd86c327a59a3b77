// SPDX-License-Identifier: Apache-2.0
// Splitting rank classes whose ranks see different networks (e.g. a pipeline stage whose
// nodes straddle a leaf-switch boundary) into subclasses of ranks that see the same, so that
// one instance per subclass can still stand for all its ranks instead of one per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/exec/sharing/group_classes.h"
#include "sim/exec/sharing/relabel.h"
#include "sim/exec/sharing/route_signature.h"
#include "sim/exec/sharing/route_symmetry.h"

namespace tessera::exec {

struct Refinement {
  // Subclasses, numbered by (graph class, lowest rank); each one's representative is its
  // lowest rank. Every subclass lies inside one graph class.
  RankPartition parts;
  GroupClasses groups;            // group classes over the subclasses
  std::vector<ClassRefs> mapped;  // rank -> map_refs of its class graph's references
};

// Splits the graph's rank classes to the coarsest partition in which any two ranks of a
// subclass have the same rank_signature under the group classes over the subclasses, the same
// group classes for each group their class graph names (relabelled to them) and, for each peer
// it names, peers in the same subclass over the same routes. Iterated to a fixed point (each
// round splits subclasses or ends it), so the group classes and the subclasses agree. Cost per
// round: one signature per rank; rounds: a few (each split spreads through groups and peers).
// Contract: `base` = classify_groups(graph), refs[c] = class_refs(graph.classes[c]); throws
// base::InputError where relabel_instance would (a rank's groups do not correspond).
Refinement refine_classes(const graph::ExecGraph& graph, RouteSignatures& sigs,
                          const GroupClasses& base, const std::vector<ClassRefs>& refs);

// Re-verifies a refinement with the symmetry rule of find_asymmetry and the correspondences
// a shared run relies on (relabelled groups and peers, collective sequence numbering, equal
// rings among a collective's copies): "" when one instance per subclass may stand for its
// ranks, otherwise why not.
std::string check_refinement(const graph::ExecGraph& graph, RouteSignatures& sigs,
                             const Refinement& ref, const std::vector<ClassRefs>& refs);

}  // namespace tessera::exec
