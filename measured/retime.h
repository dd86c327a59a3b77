// SPDX-License-Identifier: Apache-2.0
// Moves measured durations from the hardware they were measured on to another profile: each
// node with a fixed (measured) duration is scaled by the ratio of the rate that bounds its
// class on the two profiles. This is what "the same kernels on other hardware" means when
// only durations are known (a Kineto trace records no FLOPs or bytes per kernel):
//   kGemm                      peak(bf16) x gemm.max_fraction        (math-bound)
//   kAttention                 peak(bf16) x attention_fraction       (math-bound)
//   every other compute class  hbm_bandwidth x hbm_efficiency        (memory-bound)
//   host <-> device copies     kept as measured (PCIe; the profiles do not describe it)
//   collectives, send/recv     bandwidth x efficiency of the link the job's ranks share:
//                              scale-up when all `ranks` fit one node of that profile,
//                              scale-out otherwise
// Assumptions a user should know: a GEMM small enough to be memory- or launch-bound is still
// scaled by the math rate; a measured NCCL duration includes waiting for slower peers, and
// that wait is scaled too; host (CPU) time is not scaled.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::measured {

// The factors applied (new duration = measured x factor) and how many nodes got each.
struct RetimeFactors {
  double gemm = 1.0, attention = 1.0, memory = 1.0, comm = 1.0;
  std::size_t gemm_nodes = 0, attention_nodes = 0, memory_nodes = 0, comm_nodes = 0;
  std::size_t host_copy_nodes = 0;                          // kept as measured
  bool comm_scale_up_from = true, comm_scale_up_to = true;  // which link each side used
};

// The factors for a job of `ranks` devices measured on `from`, run on `to`.
RetimeFactors retime_factors(const hw::Profile& from, const hw::Profile& to, std::int32_t ranks);

// Scales every fixed duration in `g` whose node is not on `host_stream` (host work keeps its
// measured time); returns the factors with the node counts filled in.
RetimeFactors retime(graph::ExecGraph& g, const hw::Profile& from, const hw::Profile& to,
                     std::int32_t ranks, graph::Stream host_stream);

}  // namespace tessera::measured
