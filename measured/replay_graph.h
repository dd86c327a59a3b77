// SPDX-License-Identifier: Apache-2.0
// Builds an execution graph that replays one measured iteration of a Kineto trace on one
// rank, so the simulator can time it (and the replayed time be checked against the measured):
//  - every GPU activity (kernel, memcpy, memset) is a node with its measured duration, in
//    the order of its CUDA stream; NCCL kernels are collective nodes (type and payload from
//    the kernel name and args) with their measured duration, on a one-rank group: the other
//    ranks of a multi-rank job are not in the file, and a measured NCCL kernel already
//    includes the time it waited for them;
//  - the host: each CPU thread that issued CUDA runtime calls is a chain of fixed gaps, so
//    that a node cannot start before the call that launched it (the measured launch time);
//    a *Synchronize call during which GPU work finished waits for that work, and the thread
//    continues from the call's measured end;
//  - cross-stream dependencies: Kineto's cudaStreamWaitEvent/cudaEventRecord records do not
//    say which streams and events they use, so waits are inferred from timing: an activity
//    that started more than kWaitSlack after both its launch and its stream predecessor
//    waits for the latest activity of another stream that ended just before it started;
//  - work left on a stream by the previous iteration delays the stream's first activity
//    until the measured time the stream became free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/exec_graph.h"
#include "measured/iterations.h"
#include "measured/kineto_trace.h"

namespace tessera::measured {

// The stream of the host chains (CPU time between CUDA calls); GPU activities use the others.
constexpr graph::Stream kHostStream = graph::Stream::kPPRecvFwd;

struct ReplayStats {
  std::size_t gpu_nodes = 0;
  std::size_t collectives = 0;
  std::size_t host_threads = 0;
  std::size_t launches = 0;           // activities tied to their launching runtime call
  std::size_t unlaunched = 0;         // activities without one: released at their measured start
  std::size_t sync_waits = 0;         // host waits tied to GPU work (synchronize, blocking calls)
  std::size_t blocking_launches = 0;  // launch calls that waited for the GPU (of sync_waits)
  std::size_t inferred_waits = 0;     // cross-stream dependencies inferred from timing
  std::size_t carried_streams = 0;    // streams still busy with the previous iteration's work
  std::size_t cuda_streams = 0;
  // Timestamp-derived dependencies dropped because the trace's timestamps contradict each
  // other (they formed a cycle); 0 for a consistent trace.
  std::size_t dropped_deps = 0;
};

struct ReplayGraph {
  graph::ExecGraph graph;
  std::int64_t measured_ns = 0;  // Iteration::span_ns of the replayed iteration
  ReplayStats stats;
};

// `iteration` indexes set.iterations. Throws base::InputError when it has no GPU activity.
ReplayGraph build_replay(const KinetoTrace& t, const IterationSet& set, std::size_t iteration);

}  // namespace tessera::measured
