// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing/relabel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "base/error.h"

namespace tessera::exec {

namespace {

constexpr const char* kHint =
    "synthesize the graph with one rank class per rank (share_rank_classes: false)";

std::vector<std::int32_t> sorted_unique(std::vector<std::int32_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// `rank`'s groups of group class `cls`, ascending.
std::vector<std::int32_t> groups_in_class(const GroupClasses& gc, std::int32_t rank,
                                          std::int32_t cls) {
  std::vector<std::int32_t> out;
  for (std::int32_t g : gc.groups_of_rank[static_cast<std::size_t>(rank)]) {
    if (gc.class_of_group[static_cast<std::size_t>(g)] == cls) {
      out.push_back(g);
    }
  }
  return out;
}

// The representative's k-th group of a class maps to the rank's k-th group of that class
// (a rank in several equivalent groups, e.g. a pipeline group also listed as the embedding
// group, relies on the synthesizer listing such groups in the same order for every rank).
std::int32_t map_group(const GroupClasses& gc, std::int32_t group, std::int32_t rep,
                       std::int32_t rank) {
  const std::int32_t cls = gc.class_of_group[static_cast<std::size_t>(group)];
  std::vector<std::int32_t> from = groups_in_class(gc, rep, cls);
  std::vector<std::int32_t> to = groups_in_class(gc, rank, cls);
  if (from.size() != to.size()) {
    throw base::InputError(fmt::format(
        "cannot simulate rank {} on its own: it belongs to {} groups like its representative's "
        "group {}, the representative to {}; {}",
        rank, to.size(), group, from.size(), kHint));
  }
  auto k = std::find(from.begin(), from.end(), group) - from.begin();
  return to[static_cast<std::size_t>(k)];
}

// A group holding both `rep` and `peer`, pipeline groups first; -1 when there is none.
std::int32_t linking_group(const graph::ExecGraph& graph, const GroupClasses& gc, std::int32_t rep,
                           std::int32_t peer) {
  std::int32_t any = -1;
  for (std::int32_t g : gc.groups_of_rank[static_cast<std::size_t>(rep)]) {
    const graph::Group& group = graph.groups[static_cast<std::size_t>(g)];
    if (position_in(group, peer) < 0) {
      continue;
    }
    if (group.kind == graph::GroupKind::kPP) {
      return g;
    }
    any = any < 0 ? g : any;
  }
  return any;
}

std::int32_t map_peer(const graph::ExecGraph& graph, const GroupClasses& gc, std::int32_t rep,
                      std::int32_t rank, std::int32_t peer) {
  if (peer == rep) {
    return rank;
  }
  std::int32_t g = linking_group(graph, gc, rep, peer);
  if (g < 0) {
    throw base::InputError(fmt::format(
        "cannot simulate rank {} on its own: no group links its representative {} with peer "
        "{}; {}",
        rank, rep, peer, kHint));
  }
  const graph::Group& from = graph.groups[static_cast<std::size_t>(g)];
  const graph::Group& to = graph.groups[static_cast<std::size_t>(map_group(gc, g, rep, rank))];
  const auto n = static_cast<std::int32_t>(from.ranks.size());
  std::int32_t offset = position_in(from, peer) - position_in(from, rep);
  std::int32_t pos = ((position_in(to, rank) + offset) % n + n) % n;
  return to.ranks[static_cast<std::size_t>(pos)];
}

}  // namespace

ClassRefs class_refs(const graph::RankGraph& g) {
  ClassRefs refs;
  for (const graph::Node& n : g.nodes) {
    if (n.kind == graph::NodeKind::kCollective) {
      refs.groups.push_back(n.group);
    } else if (n.kind != graph::NodeKind::kCompute) {
      refs.peers.push_back(n.peer);
    }
  }
  refs.groups = sorted_unique(std::move(refs.groups));
  refs.peers = sorted_unique(std::move(refs.peers));
  return refs;
}

std::vector<std::int32_t> send_peers(const graph::RankGraph& g, const ClassRefs& refs) {
  std::vector<std::int32_t> out;
  for (const graph::Node& n : g.nodes) {
    if (n.kind == graph::NodeKind::kSend) {
      auto it = std::lower_bound(refs.peers.begin(), refs.peers.end(), n.peer);
      out.push_back(static_cast<std::int32_t>(it - refs.peers.begin()));
    }
  }
  return sorted_unique(std::move(out));
}

ClassRefs map_refs(const graph::ExecGraph& graph, const GroupClasses& classes,
                   const ClassRefs& refs, std::int32_t rank) {
  const std::int32_t rep =
      graph
          .class_rep[static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(rank)])];
  ClassRefs mapped;
  mapped.groups.reserve(refs.groups.size());
  for (std::int32_t g : refs.groups) {
    mapped.groups.push_back(rep == rank ? g : map_group(classes, g, rep, rank));
  }
  mapped.peers.reserve(refs.peers.size());
  for (std::int32_t p : refs.peers) {
    mapped.peers.push_back(rep == rank ? p : map_peer(graph, classes, rep, rank, p));
  }
  return mapped;
}

InstanceSpec relabel_instance(const graph::ExecGraph& graph, const GroupClasses& classes,
                              const ClassRefs& refs, std::int32_t rank) {
  InstanceSpec spec;
  spec.rank = rank;
  spec.cls = graph.class_of_rank[static_cast<std::size_t>(rank)];
  if (graph.class_rep[static_cast<std::size_t>(spec.cls)] == rank) {
    return spec;
  }
  const ClassRefs mapped = map_refs(graph, classes, refs, rank);
  spec.group_map.assign(graph.groups.size(), -1);
  for (std::size_t i = 0; i < refs.groups.size(); ++i) {
    spec.group_map[static_cast<std::size_t>(refs.groups[i])] = mapped.groups[i];
  }
  spec.peer_map.assign(static_cast<std::size_t>(graph.num_ranks), -1);
  for (std::size_t i = 0; i < refs.peers.size(); ++i) {
    spec.peer_map[static_cast<std::size_t>(refs.peers[i])] = mapped.peers[i];
  }
  return spec;
}

}  // namespace tessera::exec
