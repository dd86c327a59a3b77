// SPDX-License-Identifier: Apache-2.0
// Ring attention over n context-parallel ranks, as TE's AttnFuncWithCPAndKVP2P runs it
// (formulas_moe_cp_zero.md §3.3; docs/context_parallel.md §4). Each rank holds chunks r and
// 2n-1-r of the sequence; at step i it attends to the keys and values of rank r-i while the
// next block travels one hop round the ring (a send-recv on the CP stream).
//  forward: step 0 the causal diagonal (s x t); steps 1..n-1 half a block each, unmasked
//    (both query chunks x the first key chunk, or the second query chunk x both: the same
//    work; the first is the shape used here, s x t/2, for every rank); a send-recv of the
//    K/V block at steps 0..n-2; from step 1 a correction of the output by the new softmax
//    statistics (flash_attn_fwd_out_correction: reads the output and the step's, writes it).
//  backward: the K/V ring again (steps 0..n-2); from step 1 the step's dQ added to the
//    rank's and its dK/dV to the block's travelling gradient, which goes on to the next rank
//    (steps 1..n-1: n-1 send-recvs) and arrives home at the end, where it is added to the
//    rank's own (step 0) part.
// The ring's receive buffers (double-buffered K/V, and in backward also dK/dV) are held from
// the first exchange to the last step.
#include "synth/parallel/ring_attention.h"

#include <fmt/format.h>

namespace tessera::synth::parallel {

namespace {

struct Sizes {
  int n = 0;
  double kv = 0.0;   // one rank's K and V (M_kv), or their gradients
  double out = 0.0;  // the op's first output (forward y, backward dQ)
};

ProgOp exchange(const ProgOp& kernel, const std::string& what, int step, double bytes,
                std::uint8_t axis) {
  ProgOp p;
  p.name = fmt::format("{}.{}.{}", kernel.name, what, step);
  p.axis = axis;
  graph::Node& n = p.node;
  n.kind = graph::NodeKind::kCollective;
  n.coll = graph::CollType::kSendRecv;
  n.stream = graph::Stream::kCP;
  n.bytes = bytes;
  n.phase = kernel.node.phase;
  n.dtype = kernel.node.dtype;
  return p;
}

ProgOp block(const ProgOp& kernel, int step, int n) {
  ProgOp p = kernel;
  p.name = fmt::format("{}.{}", kernel.name, step);
  p.node.flops = kernel.node.flops / n;
  p.model_flops = kernel.model_flops / n;
  if (step > 0) {  // half a block, nothing masked
    p.node.causal = false;
    p.node.gemm.n = std::max<std::int64_t>(1, kernel.node.gemm.n / 2);
  }
  return p;
}

// An elementwise pass over `bytes` of HBM traffic (one FLOP per two bytes read or written).
ProgOp pass(const ProgOp& kernel, const std::string& what, int step, double bytes) {
  ProgOp p;
  p.name = step < 0 ? fmt::format("{}.{}", kernel.name, what)
                    : fmt::format("{}.{}.{}", kernel.name, what, step);
  p.node.op = graph::OpClass::kElementwise;
  p.node.bytes = bytes;
  p.node.flops = bytes / 2.0;
  p.node.phase = kernel.node.phase;
  p.node.dtype = kernel.node.dtype;
  return p;
}

RingStep step(ProgOp op) {
  RingStep s;
  s.op = std::move(op);
  return s;
}

std::int32_t push(RingPlan& plan, RingStep s) {
  plan.steps.push_back(std::move(s));
  return static_cast<std::int32_t>(plan.steps.size()) - 1;
}

// Step i's send-recv of the next K/V block: the first reads the rank's own keys and values
// and allocates the ring's receive buffers (`buffers` blocks of K/V: 2 forward, 4 backward,
// where the dK/dV ring shares them); the others follow the previous exchange.
RingStep kv_exchange(const ProgOp& kernel, const Sizes& z, std::uint8_t axis, int i,
                     std::int32_t previous, double buffers) {
  RingStep s = step(exchange(kernel, "kv_ring", i, z.kv, axis));
  if (i == 0) {
    s.reads = {1, 2};
    s.ring_buffers = static_cast<std::int64_t>(buffers * z.kv);
  } else {
    s.after = {previous};
  }
  return s;
}

RingPlan forward(const ProgOp& kernel, const Sizes& z, std::uint8_t axis) {
  RingPlan plan;
  std::int32_t shift = -1;  // the exchange bringing this step's block
  std::int32_t out = -1;    // the latest step that wrote the output
  std::int32_t last_block = -1;
  for (int i = 0; i < z.n; ++i) {
    const std::int32_t arrived = shift;
    if (i + 1 < z.n) {
      shift = push(plan, kv_exchange(kernel, z, axis, i, shift, 2.0));
    }
    RingStep b = step(block(kernel, i, z.n));
    b.reads = {0};
    if (i == 0) {
      b.reads = {0, 1, 2};  // the rank's own keys and values
    } else {
      b.after = {arrived};
    }
    last_block = push(plan, std::move(b));
    if (i == 0) {
      out = last_block;
      continue;
    }
    RingStep c = step(pass(kernel, "correction", i, 3.0 * z.out));
    c.after = {last_block, out};
    out = push(plan, std::move(c));
  }
  plan.steps[static_cast<std::size_t>(last_block)].frees_ring_buffers = true;
  plan.out_step = {out};
  return plan;
}

RingPlan backward(const ProgOp& kernel, const Sizes& z, std::uint8_t axis) {
  RingPlan plan;
  std::int32_t shift = -1;  // the K/V exchange bringing this step's block
  std::int32_t grad = -1;   // the dK/dV exchange bringing the travelling gradient
  std::int32_t dq = -1;     // the latest step that wrote dQ
  std::int32_t first_block = -1;
  for (int i = 0; i < z.n; ++i) {
    const std::int32_t arrived = shift;
    if (i + 1 < z.n) {
      shift = push(plan, kv_exchange(kernel, z, axis, i, shift, 4.0));
    }
    RingStep b = step(block(kernel, i, z.n));
    b.reads = {0, 3, 4};
    if (i == 0) {
      b.reads = {0, 1, 2, 3, 4};
    } else {
      b.after = {arrived};
    }
    const std::int32_t blk = push(plan, std::move(b));
    if (i == 0) {
      first_block = dq = blk;
      continue;
    }
    RingStep acc = step(pass(kernel, "accumulate", i, 3.0 * (z.out + z.kv)));
    acc.after = {blk, dq};
    if (grad >= 0) {
      acc.after.push_back(grad);
    }
    dq = push(plan, std::move(acc));
    RingStep send = step(exchange(kernel, "dkv_ring", i, z.kv, axis));
    send.after = {dq};
    grad = push(plan, std::move(send));
  }
  RingStep home = step(pass(kernel, "dkv", -1, 3.0 * z.kv));
  home.after = {grad, first_block};
  home.frees_ring_buffers = true;
  const std::int32_t dkv = push(plan, std::move(home));
  plan.out_step = {dq, dkv, dkv};
  return plan;
}

}  // namespace

RingPlan ring_steps(const stg::Graph& g, const stg::Op& op, const ProgOp& kernel) {
  Sizes z;
  z.n = op.ring_size;
  z.kv = static_cast<double>(g.bytes_of(op.in[1]) + g.bytes_of(op.in[2]));
  z.out = static_cast<double>(g.bytes_of(op.out[0]));
  return op.kind == stg::OpKind::kAttention ? forward(kernel, z, op.ring)
                                            : backward(kernel, z, op.ring);
}

}  // namespace tessera::synth::parallel
