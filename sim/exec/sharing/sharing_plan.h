// SPDX-License-Identifier: Apache-2.0
// Which rank instances a run simulates and how their communication is matched: one instance
// per rank class (representatives, matched by group class) when sharing is on and safe,
// otherwise one instance per rank (matched by group id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/exec/sharing/group_classes.h"
#include "topology/cluster.h"

namespace tessera::exec {

// One simulated rank: it runs its class's graph, whose group ids and peers are the class
// representative's; the maps rewrite them into this rank's own (empty map: identity). When
// shared it stands for a subclass of its class: ranks that see the same network.
struct InstanceSpec {
  std::int32_t rank = 0;
  std::int32_t cls = 0;
  std::vector<std::int32_t> group_map;  // graph group id -> actual group id
  std::vector<std::int32_t> peer_map;   // graph peer rank -> actual peer rank

  [[nodiscard]] std::int32_t group(std::int32_t g) const {
    return group_map.empty() ? g : group_map[static_cast<std::size_t>(g)];
  }
  [[nodiscard]] std::int32_t peer(std::int32_t p) const {
    return peer_map.empty() ? p : peer_map[static_cast<std::size_t>(p)];
  }
};

using SendPair = std::pair<std::int32_t, std::int32_t>;  // (sending rank, receiving rank)

struct SharingPlan {
  bool shared = false;  // instances are representatives standing for (sub)classes of ranks
  std::vector<InstanceSpec> instances;
  std::vector<std::int32_t> instance_of_rank;  // the instance that stands for each rank
  // Collectives meet under a match key: the group class when shared, else the group id.
  std::vector<std::int32_t> match_of_group;             // actual group -> match key
  std::vector<std::vector<std::int32_t>> match_groups;  // match key -> actual groups
  std::vector<std::int32_t> required;                   // match key -> instances that meet
  // The sends an instance's send stands for, keyed by its (rank, peer), its own included;
  // those crossing its route load it too (comm_paths.h). Absent: it stands for itself alone.
  std::map<SendPair, std::vector<SendPair>> send_copies;
  std::string fallback_reason;  // why sharing was requested but not used ("" otherwise)

  // Key under which a class graph counts its collectives' sequence numbers (shared: the
  // group classes of its representative's groups, which every instance of it pairs alike).
  [[nodiscard]] std::int32_t seq_key(std::int32_t graph_group) const {
    return shared ? match_of_group[static_cast<std::size_t>(graph_group)] : graph_group;
  }
};

// Contract: `graph` is validated. With share off, every class must hold exactly one rank
// (base::InputError otherwise: the class graphs name their representatives' groups). With
// share on, each class is split into subclasses of ranks that see the same network
// (class_refinement.h: route_symmetry's rule, iterated with the group classes over the
// subclasses; a class route_symmetry finds symmetric normally stays whole), one instance per
// subclass, running its class graph relabelled to its lowest rank. When splitting leaves
// every rank on its own or fails its re-verification, every rank is simulated on its own,
// its class graph relabelled, and fallback_reason says why (base::InputError when the groups
// do not determine the relabelling, except that a symmetric graph is then shared by class,
// its sends standing for themselves alone).
SharingPlan plan_sharing(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                         bool share);

}  // namespace tessera::exec
