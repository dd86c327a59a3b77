// SPDX-License-Identifier: Apache-2.0
// Tensor-parallel communication overlap (Megatron --tp-comm-overlap, Transformer Engine's
// userbuffers) as a rewrite of a lowered block: each sequence-parallel all-gather feeding a
// GEMM and each reduce-scatter of a GEMM's output is pipelined with the GEMM in chunks, in
// the fewest nodes that give the pipelined time exactly (docs/overlap.md).
#pragma once

#include <cstdint>

#include "synth/parallel/block_program.h"

namespace tessera::synth::parallel {

struct TpOverlapConfig {
  std::int64_t ag_chunks = 2;  // ring-exchange all-gather: one chunk per TP rank (TE: tp)
  std::int64_t rs_chunks = 4;  // pipelined reduce-scatter (TE's num_splits for "pipeline")
  // SMs the userbuffers kernels run on (TE's defaults: num_sm 1 for the ring exchange, whose
  // transfers are copy-engine puts, 16 for the pipeline).
  std::int32_t ag_sms = 1;
  std::int32_t rs_sms = 16;
};

// Rewrites `p` in place. Forward (and recomputed forward): all-gather -> GEMM as TE's ring
// exchange (the GEMM starts on the local shard; only its last chunk waits for the gather),
// GEMM -> reduce-scatter as TE's pipeline (the reduce-scatter of chunk i runs under GEMM
// chunk i+1). Backward: the all-gather of an incoming gradient -> its dgrad GEMM as a ring
// exchange; the re-gather of a saved input and the dgrad reduce-scatter are TE's bulk
// overlaps, which the graph's concurrency already gives.
// Returns the number of GEMMs rewritten.
std::int32_t overlap_tp_comm(BlockProgram& p, const TpOverlapConfig& cfg);

// Megatron-LM without asynchronous tensor-parallel all-reduce (before 2022, or
// --no-async-tensor-model-parallel-allreduce): the backward's all-reduce of an input
// gradient is an autograd node after the whole linear layer's backward, so it starts only
// when the weight-gradient GEMM is done and the compute stream waits for it. Rewrites `p` in
// place: each backward tensor-parallel collective also waits for the compute op issued
// before it. Returns the number of collectives changed.
std::int32_t serialize_backward_tp_comm(BlockProgram& p);

}  // namespace tessera::synth::parallel
