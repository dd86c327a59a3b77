// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing/route_signature.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "sim/models/collective/algorithm.h"

namespace tessera::exec {

namespace {

template <typename Key>
std::int32_t intern(std::map<Key, std::int32_t>& table, Key key) {
  auto next = static_cast<std::int32_t>(table.size());
  return table.try_emplace(std::move(key), next).first->second;
}

}  // namespace

RouteSignatures::RouteSignatures(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                                 const GroupClasses& classes)
    : cluster_(cluster) {
  rings_.reserve(graph.groups.size());
  for (const graph::Group& group : graph.groups) {
    rings_.push_back(ring_of(group));
  }
  views_.resize(static_cast<std::size_t>(graph.num_ranks));
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    for (std::int32_t g : classes.groups_of_rank[static_cast<std::size_t>(r)]) {
      views_[static_cast<std::size_t>(r)].push_back(view_of(graph, r, g));
    }
  }
}

std::int32_t RouteSignatures::route(std::int32_t src, std::int32_t dst) {
  std::vector<LinkKind> kinds;
  if (src != dst) {
    for (topology::LinkId l : cluster_.route(src, dst)) {
      const topology::Link& link = cluster_.link(l);
      kinds.emplace_back(static_cast<int>(link.cls), link.bandwidth, link.efficiency, link.latency);
    }
  }
  return intern(routes_, std::move(kinds));
}

// A collective moves its whole ring together, so only the ring's multiset of hops matters.
// (The ring's hops stand for every algorithm's: each connects the same members.)
std::int32_t RouteSignatures::ring_of(const graph::Group& group) {
  static const models::CollectiveAlgorithm& ring = *models::builtin_collectives().find("ring");
  std::vector<models::Flow> flows;
  ring.append_flows(group.ranks, cluster_, flows);
  std::vector<std::int32_t> hops;
  hops.reserve(flows.size());
  for (const models::Flow& f : flows) {
    hops.push_back(route(f.src, f.dst));
  }
  std::sort(hops.begin(), hops.end());
  return intern(ring_ids_, std::move(hops));
}

// Pipeline groups carry sends, so their hops out of and into the rank matter too.
GroupView RouteSignatures::view_of(const graph::ExecGraph& graph, std::int32_t rank,
                                   std::int32_t g) {
  const graph::Group& group = graph.groups[static_cast<std::size_t>(g)];
  GroupView v{g, rings_[static_cast<std::size_t>(g)], -1, -1};
  if (group.kind == graph::GroupKind::kPP && group.ranks.size() > 1) {
    const auto n = static_cast<std::int32_t>(group.ranks.size());
    const std::int32_t pos = position_in(group, rank);
    v.out = route(rank, group.ranks[static_cast<std::size_t>((pos + 1) % n)]);
    v.in = route(group.ranks[static_cast<std::size_t>((pos + n - 1) % n)], rank);
  }
  return v;
}

RankSignature rank_signature(const RouteSignatures& sigs, const GroupClasses& classes,
                             std::int32_t rank) {
  RankSignature sig;
  for (const GroupView& v : sigs.view(rank)) {
    sig.push_back({classes.class_of_group[static_cast<std::size_t>(v.group)], v.ring, v.out, v.in});
  }
  std::sort(sig.begin(), sig.end());
  return sig;
}

}  // namespace tessera::exec
