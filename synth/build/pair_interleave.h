// SPDX-License-Identifier: Apache-2.0
// Overlapping a paired forward and backward's expert-parallel all-to-alls (docs/moe.md,
// "Overlap"): the two tasks' nodes, built one after the other, are re-issued interleaved so
// that each runs its compute while the other's all-to-all is in flight, as Megatron-Core's
// combined 1F1B and DeepSeek's DualPipe schedule them.
#pragma once

#include <vector>

#include "graph/exec_graph.h"

namespace tessera::synth::detail {

// Nodes [lo, mid) are one task's (the forward), [mid, hi) the other's (the backward).
struct TaskPair {
  graph::NodeId lo = 0, mid = 0, hi = 0;
};

// The issue order of a pair's nodes: segments taken in turn from the backward and the
// forward, each segment ending before a compute node that waits for an expert-parallel
// all-to-all (directly or through the communication after it), and every dependency kept.
// Empty when either task has no such wait (nothing to overlap: the order stays).
std::vector<graph::NodeId> interleaved_order(const graph::RankGraph& g, const TaskPair& p);

// Renumbers `g` so that every pair's nodes run in interleaved_order; the other nodes keep
// their places. Every dependency still precedes its dependent.
void interleave_pairs(graph::RankGraph& g, const std::vector<TaskPair>& pairs);

}  // namespace tessera::synth::detail
