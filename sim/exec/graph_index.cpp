// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/graph_index.h"

#include <cstddef>
#include <map>

namespace tessera::exec {

namespace {

void index_streams(const graph::RankGraph& g, GraphIndex& ix) {
  ix.pos_in_stream.resize(g.size());
  ix.stream.resize(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    ix.stream[i] = g.nodes[i].stream;
    auto& list = ix.stream_nodes[static_cast<std::size_t>(stream_index(g.nodes[i].stream))];
    ix.pos_in_stream[i] = static_cast<std::uint32_t>(list.size());
    list.push_back(static_cast<graph::NodeId>(i));
  }
}

void index_dependents(const graph::RankGraph& g, GraphIndex& ix) {
  std::vector<std::uint32_t> count(g.size() + 1, 0);
  for (graph::NodeId d : g.deps) {
    ++count[d + 1];
  }
  ix.out_begin.assign(g.size() + 1, 0);
  for (std::size_t i = 0; i < g.size(); ++i) {
    ix.out_begin[i + 1] = ix.out_begin[i] + count[i + 1];
  }
  ix.out.resize(g.deps.size());
  std::vector<std::uint32_t> fill(ix.out_begin.begin(), ix.out_begin.end() - 1);
  for (std::size_t i = 0; i < g.size(); ++i) {
    auto [b, e] = g.deps_of(static_cast<graph::NodeId>(i));
    for (const graph::NodeId* d = b; d != e; ++d) {
      ix.out[fill[*d]++] = static_cast<graph::NodeId>(i);
    }
  }
}

void index_sequences(const graph::RankGraph& g, const SharingPlan& plan, GraphIndex& ix) {
  ix.coll_seq.assign(g.size(), 0);
  std::map<std::int32_t, std::uint32_t> next;  // few keys per graph
  for (std::size_t i = 0; i < g.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    if (n.kind == graph::NodeKind::kCollective) {
      ix.coll_seq[i] = next[plan.seq_key(n.group)]++;
    }
  }
}

}  // namespace

GraphIndex build_graph_index(const graph::RankGraph& g, const SharingPlan& plan) {
  GraphIndex ix;
  index_streams(g, ix);
  index_dependents(g, ix);
  index_sequences(g, plan, ix);
  return ix;
}

}  // namespace tessera::exec
