// SPDX-License-Identifier: Apache-2.0
// Equivalence classes of communication groups under rank classes: two groups are equivalent
// when they serve the same parallel dimension with the same shape (their members' offsets
// from the lowest member) and their members fall into the same multiset of rank classes (or
// subclasses). One representative rank's collective on a group stands for all of them. The
// shape tells apart groups of one dimension that a rank belongs to twice: HSDP's shard and
// replica groups are both data-parallel.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"

namespace tessera::exec {

struct GroupClasses {
  std::vector<std::int32_t> class_of_group;               // group -> group class
  std::vector<std::vector<std::int32_t>> groups;          // group class -> its groups, ascending
  std::vector<std::int32_t> distinct_rank_classes;        // group class -> rank classes in it
  std::vector<std::vector<std::int32_t>> groups_of_rank;  // rank -> its groups, ascending
};

// Contract: the graph has been validated (every group member is a valid rank). Group class
// ids are numbered in order of each class's lowest group id, so they are deterministic.
GroupClasses classify_groups(const graph::ExecGraph& graph);

// The same over another partition of the ranks (rank -> class id, e.g. rank subclasses that
// refine the graph's classes); distinct_rank_classes then counts classes of that partition.
GroupClasses classify_groups(const graph::ExecGraph& graph,
                             const std::vector<std::int32_t>& class_of_rank);

// Position of `rank` in `group`'s ring order, or -1.
std::int32_t position_in(const graph::Group& group, std::int32_t rank);

}  // namespace tessera::exec
