// SPDX-License-Identifier: Apache-2.0
// What the executor precomputes once per class graph: each stream's node list, every node's
// dependents (reverse CSR) and every collective's sequence number on its match key.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "graph/exec_graph.h"
#include "sim/exec/sharing/sharing_plan.h"

namespace tessera::exec {

struct GraphIndex {
  std::array<std::vector<graph::NodeId>, graph::kNumStreams> stream_nodes;
  std::vector<std::uint32_t> pos_in_stream;  // node -> index in its stream's list
  std::vector<graph::Stream> stream;         // node -> its stream (one byte, not the node)
  std::vector<std::uint32_t> out_begin{0};   // dependents of i: out[out_begin[i]..out_begin[i+1])
  std::vector<graph::NodeId> out;
  std::vector<std::uint32_t> coll_seq;  // collective nodes: how many earlier ones share its key
};

// Contract: `g` is validated. Sequence numbers follow node (issue) order, counted per
// plan.seq_key(group), which is what every member's graph agrees on.
GraphIndex build_graph_index(const graph::RankGraph& g, const SharingPlan& plan);

inline int stream_index(graph::Stream s) {
  return static_cast<int>(s);
}

}  // namespace tessera::exec
