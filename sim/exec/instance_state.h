// SPDX-License-Identifier: Apache-2.0
// The run-time state of one simulated rank instance: unfinished dependencies per node, the
// head of each stream, memory in use and the busy-time accounting.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "sim/exec/busy_tracker.h"
#include "sim/exec/graph_index.h"
#include "sim/exec/host_thread.h"
#include "sim/exec/interference.h"
#include "sim/exec/sharing/sharing_plan.h"

namespace tessera::exec {

struct InstanceState {
  const InstanceSpec* spec = nullptr;
  const graph::RankGraph* graph = nullptr;
  const GraphIndex* index = nullptr;
  std::vector<std::uint32_t> pending;  // per node: dependencies not yet finished
  std::vector<char> node_done;         // per node: finished
  std::array<std::uint32_t, graph::kNumStreams> head{};
  std::array<bool, graph::kNumStreams> head_started{};
  std::size_t finished = 0;
  BusyTracker busy;
  std::int64_t memory = 0;  // bytes in use, static memory included
  std::int64_t peak_memory = 0;
  std::int64_t comm_memory = 0;  // the part of memory held in communication buffers
  std::int64_t peak_comm = 0;    // comm_memory when memory first reached peak_memory
  bool recorded = false;         // spans and memory samples go to the timeline
  base::SimTime end = 0;         // when the last node finished
  double flops = 0.0;
  std::array<base::SimTime, graph::kNumOpClasses> compute_by_class{};  // kernel time per op class
  std::vector<base::SimTime> start;  // per node, only when recorded
  // Interference (ExecSetup::interference): the collectives in flight and the kernels they
  // slow down.
  InterferenceState load;
  RunningKernels kernels;
  HostThread host;                          // with a host-bound compute model
  std::vector<graph::NodeId> host_waiting;  // ready, not yet issued by the host

  [[nodiscard]] bool done() const { return finished == graph->size(); }
  [[nodiscard]] bool at_head(graph::NodeId n) const {
    const graph::Stream stream = index->stream[n];
    if (!graph::ordered_stream(stream)) {
      return true;  // point-to-point: no order among the stream's nodes
    }
    auto s = static_cast<std::size_t>(stream_index(stream));
    return index->pos_in_stream[n] == head[s];
  }
  [[nodiscard]] const graph::Node& node(graph::NodeId n) const { return graph->nodes[n]; }
};

// Skewed MoE routing (graph/expert_loads.h): the factor instance s's node n scales by.
inline double load_factor(const InstanceState& s, const graph::ExpertLoads& loads,
                          const graph::Node& n) {
  return loads.factor(n.load, s.spec->rank, n.layer, n.microbatch);
}

// Node n with its FLOPs, bytes and GEMM rows scaled by an expert load f != 1 (the grouped
// GEMM at its experts' mean rows).
inline graph::Node loaded_node(const graph::Node& n, double f) {
  graph::Node out = n;
  out.flops *= f;
  out.bytes *= f;
  if (out.op == graph::OpClass::kGemm) {
    out.gemm.m = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::llround(static_cast<double>(n.gemm.m) * f)));
  }
  return out;
}

}  // namespace tessera::exec
