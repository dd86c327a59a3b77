// SPDX-License-Identifier: Apache-2.0
// What a rank sees of the network, as small integers that compare link kinds, never concrete
// links: a route is its sequence of link kinds (class, bandwidth, efficiency, latency), a
// group's ring is the multiset of its hops' routes, and a rank sees, per group it belongs to,
// that ring plus (pipeline groups) the routes to and from its ring neighbours. Two routes
// over different spines, or two rings over different leaves of the same kinds, compare equal.
// Deliberately blind to which concrete links flows share: where equal-cost routing spreads
// flows over spines by a hash, ranks with equal signatures can differ in whether another
// rank's flow collides with theirs on a spine link, and a shared run is then close to, not
// equal to, a per-rank one (comparing link sharing instead splits such runs to single ranks).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "sim/exec/sharing/group_classes.h"
#include "topology/cluster.h"

namespace tessera::exec {

// One group of a rank: the group, its ring signature, the routes out to and in from the
// rank's ring neighbours (pipeline groups of two or more ranks; -1 otherwise).
struct GroupView {
  std::int32_t group = -1;
  std::int32_t ring = -1;
  std::int32_t out = -1;
  std::int32_t in = -1;
};

// Contract: `classes.groups_of_rank` belongs to `graph`. Every group's ring and every rank's
// view are computed once, at construction (cost: one route per ring hop and two per pipeline
// group membership); route() interns further routes on demand. Signatures are numbered in
// order of first appearance, so they are deterministic but only comparable within one table.
class RouteSignatures {
 public:
  RouteSignatures(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                  const GroupClasses& classes);

  [[nodiscard]] std::int32_t route(std::int32_t src, std::int32_t dst);
  [[nodiscard]] std::int32_t ring(std::int32_t group) const {
    return rings_[static_cast<std::size_t>(group)];
  }
  // `rank`'s groups in groups_of_rank order.
  [[nodiscard]] const std::vector<GroupView>& view(std::int32_t rank) const {
    return views_[static_cast<std::size_t>(rank)];
  }

 private:
  using LinkKind = std::tuple<int, double, double, base::SimTime>;

  std::int32_t ring_of(const graph::Group& group);
  GroupView view_of(const graph::ExecGraph& graph, std::int32_t rank, std::int32_t group);

  const topology::Cluster& cluster_;
  std::map<std::vector<LinkKind>, std::int32_t> routes_;
  std::map<std::vector<std::int32_t>, std::int32_t> ring_ids_;
  std::vector<std::int32_t> rings_;            // group -> ring signature
  std::vector<std::vector<GroupView>> views_;  // rank -> its groups
};

// The comparable form of a rank's view: one (group class, ring, out, in) per group, sorted,
// so that equal signatures mean the same multiset of groups, rings and neighbour routes.
using RankSignature = std::vector<std::array<std::int32_t, 4>>;
RankSignature rank_signature(const RouteSignatures& sigs, const GroupClasses& classes,
                             std::int32_t rank);

}  // namespace tessera::exec
