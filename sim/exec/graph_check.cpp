// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/graph_check.h"

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/error.h"
#include "sim/exec/sharing/group_classes.h"

namespace tessera::exec {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw base::InputError("execution graph: " + what);
}

bool valid_rank(const graph::ExecGraph& g, std::int32_t r) {
  return r >= 0 && r < g.num_ranks;
}

void check_classes(const graph::ExecGraph& g, const topology::Cluster& cluster) {
  if (g.num_ranks < 1 || g.num_ranks > cluster.num_devices()) {
    fail(fmt::format("{} ranks do not fit a cluster of {} devices", g.num_ranks,
                     cluster.num_devices()));
  }
  if (g.class_of_rank.size() != static_cast<std::size_t>(g.num_ranks) ||
      g.class_rep.size() != g.classes.size()) {
    fail("class_of_rank must list every rank and class_rep every class");
  }
  for (std::int32_t c : g.class_of_rank) {
    if (c < 0 || static_cast<std::size_t>(c) >= g.classes.size()) {
      fail(fmt::format("rank class {} does not exist", c));
    }
  }
  for (std::size_t c = 0; c < g.classes.size(); ++c) {
    std::int32_t rep = g.class_rep[c];
    if (!valid_rank(g, rep) ||
        g.class_of_rank[static_cast<std::size_t>(rep)] != static_cast<std::int32_t>(c)) {
      fail(fmt::format("the representative of rank class {} is not a rank of that class", c));
    }
  }
}

void check_groups(const graph::ExecGraph& g) {
  std::vector<char> seen(static_cast<std::size_t>(g.num_ranks), 0);
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    const auto& ranks = g.groups[i].ranks;
    if (ranks.empty()) {
      fail(fmt::format("group {} has no members", i));
    }
    for (std::int32_t r : ranks) {
      if (!valid_rank(g, r) || seen[static_cast<std::size_t>(r)] != 0) {
        fail(fmt::format("group {} lists rank {} {}", i, r,
                         valid_rank(g, r) ? "twice" : "which does not exist"));
      }
      seen[static_cast<std::size_t>(r)] = 1;
    }
    for (std::int32_t r : ranks) {
      seen[static_cast<std::size_t>(r)] = 0;
    }
  }
}

std::string where(const graph::ExecGraph& g, std::size_t cls, std::size_t node) {
  const graph::Node& n = g.classes[cls].nodes[node];
  std::string name = n.name < g.names.size() ? g.names[n.name] : "?";
  return fmt::format("rank class {} (rank {}) node {} '{}'", cls, g.class_rep[cls], node, name);
}

void check_node(const graph::ExecGraph& g, std::size_t cls, std::size_t i) {
  const graph::RankGraph& rg = g.classes[cls];
  const graph::Node& n = rg.nodes[i];
  if (static_cast<int>(n.stream) >= graph::kNumStreams) {
    fail(where(g, cls, i) + ": unknown stream");
  }
  auto [b, e] = rg.deps_of(static_cast<graph::NodeId>(i));
  for (const graph::NodeId* d = b; d != e; ++d) {
    if (*d >= i) {
      fail(where(g, cls, i) + fmt::format(": dependency {} does not precede it", *d));
    }
  }
  if (n.kind == graph::NodeKind::kCollective) {
    if (n.group < 0 || static_cast<std::size_t>(n.group) >= g.groups.size() ||
        position_in(g.groups[static_cast<std::size_t>(n.group)], g.class_rep[cls]) < 0) {
      fail(where(g, cls, i) + fmt::format(": group {} does not exist or does not contain rank {}",
                                          n.group, g.class_rep[cls]));
    }
  } else if (n.kind != graph::NodeKind::kCompute && !valid_rank(g, n.peer)) {
    fail(where(g, cls, i) + fmt::format(": peer rank {} does not exist", n.peer));
  }
}

}  // namespace

void check_graph(const graph::ExecGraph& graph, const topology::Cluster& cluster) {
  check_classes(graph, cluster);
  check_groups(graph);
  for (std::size_t c = 0; c < graph.classes.size(); ++c) {
    const graph::RankGraph& rg = graph.classes[c];
    if (rg.dep_begin.size() != rg.nodes.size() + 1 || rg.dep_begin.back() != rg.deps.size()) {
      fail(fmt::format("rank class {}: dependency index does not match its nodes", c));
    }
    for (std::size_t i = 0; i < rg.size(); ++i) {
      check_node(graph, c, i);
    }
  }
}

}  // namespace tessera::exec
