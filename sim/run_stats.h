// SPDX-License-Identifier: Apache-2.0
// What one simulated step produced: per-rank times, the breakdown that explains the step
// time, memory peaks, and (optionally) every timed interval for the timeline.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "graph/exec_graph.h"

namespace tessera::sim {

// A rank's memory at its peak, by what holds it; the parts sum to the peak exactly.
struct MemoryBreakdown {
  double weights = 0.0;
  double gradients = 0.0;
  double optimizer = 0.0;     // optimizer states (fp32 master weights, Adam moments)
  double activations = 0.0;   // activations and their gradients, pipeline messages
  double comm_buffers = 0.0;  // collective outputs still held
};

struct RankStats {
  std::int32_t rank = 0;
  std::int32_t stage = 0;
  double end_s = 0.0;      // when this rank finished its last node
  double compute_s = 0.0;  // time the compute stream was busy
  // Communication time not hidden behind compute, per group kind (TP, DP, PP, CP, EP).
  // When kinds overlap in an interval without compute, it is charged to the first in
  // kind order (TP, DP, PP, ...).
  std::array<double, graph::kNumGroupKinds> exposed_comm_s{};
  std::array<double, graph::kNumGroupKinds> comm_s{};  // total busy time per kind
  // The device idle while a node whose inputs were ready waited for the host thread to issue
  // it (sim/exec/host_thread.h): no kernel and no collective in flight.
  double host_wait_s = 0.0;
  double idle_s = 0.0;  // step_time - compute - exposed comm - host wait - host time per step
  double flops = 0.0;   // FLOPs this rank executed (hardware FLOPs)
  std::array<double, graph::kNumOpClasses> compute_by_class_s{};  // kernel time per op class
  double peak_memory = 0.0;                                       // bytes, static + dynamic peak
  double static_memory = 0.0;      // weights, gradients, optimizer states
  bool oom = false;                // peak_memory above the profile's usable capacity
  MemoryBreakdown peak_breakdown;  // at the first moment memory reached peak_memory
  // Bytes this rank sends in the step, per group kind (TP, DP, PP, CP, EP): a collective over
  // n ranks with payload P counts as in a ring (all-reduce 2(n-1)/n P, all-gather,
  // reduce-scatter and all-to-all (n-1)/n P, broadcast P); a pipeline send counts its payload.
  std::array<double, graph::kNumGroupKinds> sent_bytes{};
  // Skewed MoE routing: the rank's expert rows over the balanced ones, mean and largest over
  // its MoE layers and microbatches (1 when balanced), and the routed token copies it drops.
  double expert_load = 1.0;
  double expert_load_max = 1.0;
  double dropped_tokens = 0.0;
  std::int32_t tp_index = 0;  // position in its tensor-parallel group (0 without one)
  std::int32_t dp_index = 0;  // position in its data-parallel group (0 without one)
};

// One timed interval on a stream, for timeline.json.
struct Span {
  std::int32_t rank = 0;
  graph::Stream stream = graph::Stream::kCompute;
  std::uint32_t name = 0;  // ExecGraph::names index
  std::int32_t microbatch = -1;
  base::SimTime start = 0;
  base::SimTime end = 0;
  double bytes = 0.0;  // comm payload or compute bytes
  double flops = 0.0;
  graph::NodeKind kind = graph::NodeKind::kCompute;
  graph::OpClass op = graph::OpClass::kElementwise;  // compute
  graph::GroupKind group = graph::GroupKind::kTP;    // communication
  std::string_view algorithm;  // a collective: the algorithm and protocol the tuner chose
  std::string_view protocol;   // (names of the static registry; empty otherwise)
};

// HBM in use on a rank from `time` on, for the timeline's memory counter.
struct MemorySample {
  std::int32_t rank = 0;
  base::SimTime time = 0;
  std::int64_t bytes = 0;
};

// A rank the timeline shows, and the simulated rank whose spans it shows (the same rank, or
// the representative of the instance it shares).
struct TimelineRank {
  std::int32_t rank = 0;
  std::int32_t source = 0;
};

// Rank 0's collectives of one kind, type, algorithm and protocol (the tuner's choice): how
// many ran and their total time, each from its start to its end.
struct CollectiveUse {
  graph::GroupKind kind = graph::GroupKind::kTP;
  graph::CollType type = graph::CollType::kAllReduce;
  std::string_view algorithm;  // names of the static registry
  std::string_view protocol;
  std::int64_t calls = 0;
  double time_s = 0.0;
};

struct RunStats {
  double step_time_s = 0.0;
  // Host time the step adds after every rank's last kernel (the profile's under_load.step):
  // part of step_time_s, of no rank's compute or communication.
  double host_step_s = 0.0;
  std::vector<RankStats> ranks;      // every rank, in rank order
  std::vector<Span> spans;           // filled when timeline recording is on (representative ranks)
  std::vector<MemorySample> memory;  // with spans: each change of a recorded rank's HBM in use
  std::vector<TimelineRank> timeline_ranks;      // with spans: the ranks the timeline shows
  std::vector<CollectiveUse> rank0_collectives;  // sorted by kind, type, algorithm, protocol
  std::uint64_t events = 0;                      // simulated events processed
  std::int32_t simulated_ranks = 0;              // distinct rank instances actually simulated
  double hbm_capacity = 0.0;                     // usable bytes per device
  double peak_flops = 0.0;                       // per device, for the step's dtype
  // Why rank-class sharing was requested but every rank was simulated ("" otherwise).
  std::string sharing_fallback;
  bool expert_loads = false;  // skewed MoE routing: the ranks' expert_load fields are set
};

// What simulate throws when a rank goes over SimOptions::stop_above_memory.
class MemoryLimit : public base::SimulationError {
 public:
  MemoryLimit(std::int32_t rank, double bytes);
  [[nodiscard]] std::int32_t rank() const { return rank_; }
  [[nodiscard]] double bytes() const { return bytes_; }

 private:
  std::int32_t rank_;
  double bytes_;
};

}  // namespace tessera::sim
