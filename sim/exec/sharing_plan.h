// SPDX-License-Identifier: Apache-2.0
// Which rank instances a run simulates and how their communication is matched: one instance
// per rank class (representatives, matched by group class) when sharing is on and safe,
// otherwise one instance per rank (matched by group id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/exec/group_classes.h"
#include "synth/graph/exec_graph.h"
#include "topology/cluster.h"

namespace tessera::exec {

// One simulated rank: it runs its class's graph, whose group ids and peers are the class
// representative's; the maps rewrite them into this rank's own (empty map: identity).
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

struct SharingPlan {
  bool shared = false;  // instances are class representatives standing for their classes
  std::vector<InstanceSpec> instances;
  std::vector<std::int32_t> instance_of_rank;  // the instance that stands for each rank
  // Collectives meet under a match key: the group class when shared, else the group id.
  std::vector<std::int32_t> match_of_group;             // actual group -> match key
  std::vector<std::vector<std::int32_t>> match_groups;  // match key -> actual groups
  std::vector<std::int32_t> required;                   // match key -> instances that meet
  std::string fallback_reason;  // why sharing was requested but not used ("" otherwise)

  // Key under which a class graph counts its collectives' sequence numbers.
  [[nodiscard]] std::int32_t seq_key(std::int32_t graph_group) const {
    return shared ? match_of_group[static_cast<std::size_t>(graph_group)] : graph_group;
  }
};

// Contract: `graph` is validated. With share off, every class must hold exactly one rank
// (base::InputError otherwise: the class graphs name their representatives' groups). With
// share on, classes are shared when route_symmetry finds them symmetric; otherwise every
// rank is simulated on its own, its class graph relabelled (base::InputError when the
// groups do not determine the relabelling).
SharingPlan plan_sharing(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                         bool share);

}  // namespace tessera::exec
