// SPDX-License-Identifier: Apache-2.0
// Ring attention unrolled (context parallelism's p2p, docs/context_parallel.md §4): what one
// ring attention op (stg::Graph::ring_attention) or its backward kernel becomes in a block
// program, step by step, as Transformer Engine's AttnFuncWithCPAndKVP2P runs it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "synth/parallel/block_program.h"
#include "synth/stg/graph.h"

namespace tessera::synth::parallel {

struct RingStep {
  ProgOp op;                        // its deps are filled by the lowering
  std::vector<std::int32_t> after;  // earlier steps it waits for (indices into the steps)
  std::vector<std::size_t> reads;   // the ring op's inputs it reads (indices into Op::in)
  std::int64_t ring_buffers = 0;    // receive buffers allocated at its start (comm memory)
  bool frees_ring_buffers = false;  // ... and released at its end
};

struct RingPlan {
  std::vector<RingStep> steps;
  std::vector<std::int32_t> out_step;  // per output of the op: the step that writes it
};

// `kernel` is the op lowered whole (its costs the ring's total); `g` and `op` give the sizes.
RingPlan ring_steps(const stg::Graph& g, const stg::Op& op, const ProgOp& kernel);

}  // namespace tessera::synth::parallel
