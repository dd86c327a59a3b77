// SPDX-License-Identifier: Apache-2.0
// TP communication overlap (synth/parallel/tp_overlap.h) against the closed forms of chunked
// pipelining: the rewritten block, list-scheduled on its two in-order streams with each part
// taking its share of the GEMM's time T and the collective's time C, ends when the
// pipelined schedule with n chunks ends.
#include "synth/parallel/tp_overlap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

namespace tessera::synth::parallel {
namespace {

ProgOp gemm(std::vector<std::int32_t> deps, graph::Phase phase = graph::Phase::kForward) {
  ProgOp o;
  o.name = "gemm";
  o.node.op = graph::OpClass::kGemm;
  o.node.flops = 1000.0;
  o.node.gemm = {.m = 4096, .n = 1024, .k = 1024};
  o.node.phase = phase;
  o.deps = std::move(deps);
  return o;
}

ProgOp tp_coll(graph::CollType t, std::vector<std::int32_t> deps,
               graph::Phase phase = graph::Phase::kForward) {
  ProgOp o;
  o.name = "coll";
  o.node.kind = graph::NodeKind::kCollective;
  o.node.coll = t;
  o.node.stream = graph::Stream::kTP;
  o.node.bytes = 100.0;
  o.node.phase = phase;
  o.axis = static_cast<std::uint8_t>(Axis::kTP);
  o.deps = std::move(deps);
  return o;
}

BlockProgram program(std::vector<ProgOp> ops, std::int32_t n_fwd) {
  BlockProgram p;
  p.ops = std::move(ops);
  p.n_fwd = n_fwd;
  p.w_begin = static_cast<std::int32_t>(p.ops.size());
  return p;
}

// The end of the block: every op starts when its dependencies and its stream's previous op
// are done; a GEMM part takes T x its share of the FLOPs, a collective part C x its share
// of the bytes (block inputs are ready at 0).
double makespan(const BlockProgram& p, double t, double c) {
  std::vector<double> end(p.ops.size(), 0.0);
  std::array<double, 2> stream_free{0.0, 0.0};
  double last = 0.0;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const ProgOp& o = p.ops[i];
    const bool comm = o.node.kind == graph::NodeKind::kCollective;
    double start = stream_free[comm ? 1 : 0];
    for (std::int32_t d : o.deps) {
      start = d >= 0 ? std::max(start, end[static_cast<std::size_t>(d)]) : start;
    }
    end[i] = start + (comm ? c * o.node.bytes / 100.0 : t * o.node.flops / 1000.0);
    stream_free[comm ? 1 : 0] = end[i];
    last = std::max(last, end[i]);
  }
  return last;
}

TEST(TpOverlap, RingExchangeAllGatherEndsAtMaxOfGemmAndGatherPlusOneChunk) {
  for (std::int64_t n : {2, 4, 8}) {
    for (auto [t, c] : {std::pair{10.0, 4.0}, {4.0, 10.0}, {6.0, 6.0}}) {
      BlockProgram p = program({tp_coll(graph::CollType::kAllGather, {kFwdInput}), gemm({0})}, 2);
      p.fwd_out = 1;
      ASSERT_EQ(overlap_tp_comm(p, {.ag_chunks = n, .rs_chunks = 4}), 1);
      const auto nd = static_cast<double>(n);
      // Chunk 0 is local; chunk k waits for k ring steps of C/(n-1): the last GEMM chunk
      // starts at max((n-1)T/n, C).
      EXPECT_NEAR(makespan(p, t, c), std::max(t, c + t / nd), 1e-9) << "n=" << n;
      EXPECT_NEAR(
          makespan(program({tp_coll(graph::CollType::kAllGather, {kFwdInput}), gemm({0})}, 2), t,
                   c),
          t + c, 1e-9);         // without the rewrite: in sequence
      EXPECT_EQ(p.fwd_out, 2);  // the block's output is the GEMM's last part
      EXPECT_EQ(p.ops[1].node.gemm.m + p.ops[2].node.gemm.m, 4096);
      EXPECT_EQ(p.ops[0].node.comm_sms, 1);  // TE's ring exchange: copy-engine puts
    }
  }
}

TEST(TpOverlap, PipelinedReduceScatterEndsAtMaxPlusMinOverN) {
  for (auto [t, c] : {std::pair{10.0, 4.0}, {4.0, 10.0}, {6.0, 6.0}}) {
    BlockProgram p = program({gemm({kFwdInput}), tp_coll(graph::CollType::kReduceScatter, {0})}, 2);
    p.fwd_out = 1;
    ASSERT_EQ(overlap_tp_comm(p, {.ag_chunks = 2, .rs_chunks = 4}), 1);
    EXPECT_NEAR(makespan(p, t, c), std::max(t, c) + std::min(t, c) / 4.0, 1e-9);
    EXPECT_EQ(p.fwd_out, 3);
    double bytes = 0.0;
    for (const ProgOp& o : p.ops) {
      bytes += o.node.kind == graph::NodeKind::kCollective ? o.node.bytes : 0.0;
    }
    EXPECT_DOUBLE_EQ(bytes, 100.0);         // the collective's bytes are split, not duplicated
    EXPECT_EQ(p.ops[2].node.comm_sms, 16);  // TE's pipeline kernels
    EXPECT_EQ(p.ops[3].node.comm_sms, 16);
  }
}

TEST(TpOverlap, KeepsMemoryOnTheFirstAndLastParts) {
  BlockProgram p = program({gemm({kFwdInput}), tp_coll(graph::CollType::kReduceScatter, {0})}, 2);
  p.ops[0].node.mem_alloc = 64;
  p.ops[1].node.mem_free = 64;
  overlap_tp_comm(p, {});
  ASSERT_EQ(p.ops.size(), 4U);
  EXPECT_EQ(p.ops[0].node.mem_alloc, 64);  // the GEMM's first part allocates its output
  EXPECT_EQ(p.ops[1].node.mem_alloc, 0);
  EXPECT_EQ(p.ops[3].node.mem_free, 64);  // the reduce-scatter's last part frees it
  EXPECT_EQ(p.ops[2].node.mem_free, 0);
}

// The re-gather of a saved forward input in backward is TE's bulk overlap with the dgrad
// GEMM, not a pipeline: it stays as it is; so does an all-reduce (no sequence parallelism).
TEST(TpOverlap, LeavesBulkOverlapsAndAllReducesAlone) {
  ProgOp fwd = gemm({kFwdInput});
  BlockProgram p = program({fwd, tp_coll(graph::CollType::kAllGather, {0}, graph::Phase::kBackward),
                            gemm({1, kBwdInput}, graph::Phase::kBackward),
                            tp_coll(graph::CollType::kAllReduce, {2}, graph::Phase::kBackward)},
                           1);
  p.wgrad_ops = {2};
  EXPECT_EQ(overlap_tp_comm(p, {.ag_chunks = 8, .rs_chunks = 4}), 0);
  EXPECT_EQ(p.ops.size(), 4U);
  EXPECT_EQ(p.wgrad_ops, std::vector<std::int32_t>{2});
}

// The incoming gradient's all-gather feeding a dgrad GEMM is a ring exchange; the indices
// of the sections and the weight-gradient ops follow the rewrite.
TEST(TpOverlap, RewritesTheGradientGatherAndRemapsIndices) {
  BlockProgram p =
      program({gemm({kFwdInput}),
               tp_coll(graph::CollType::kAllGather, {kBwdInput}, graph::Phase::kBackward),
               gemm({1}, graph::Phase::kBackward), gemm({1}, graph::Phase::kBackward)},
              1);
  p.bwd_out = 2;
  p.wgrad_ops = {3};
  EXPECT_EQ(overlap_tp_comm(p, {.ag_chunks = 4, .rs_chunks = 4}), 1);
  ASSERT_EQ(p.ops.size(), 5U);
  EXPECT_EQ(p.n_fwd, 1);
  EXPECT_EQ(p.w_begin, 5);
  EXPECT_EQ(p.bwd_out, 3);
  EXPECT_EQ(p.wgrad_ops, std::vector<std::int32_t>{4});
  EXPECT_EQ(p.ops[4].deps, std::vector<std::int32_t>{1});          // the wgrad waits for the gather
  EXPECT_EQ(p.ops[2].deps, std::vector<std::int32_t>{kBwdInput});  // the local chunk does not
}

// Megatron-LM of 2021: the backward all-reduce of the dgrad output starts after the wgrad
// GEMM: forward, dgrad, wgrad, all-reduce, next op (4T + C) instead of the all-reduce under
// the wgrad (3T + max(T, C)).
TEST(SerializeBackwardTpComm, TheAllReduceWaitsForTheWeightGradient) {
  BlockProgram p = program({gemm({kFwdInput}), gemm({kBwdInput}, graph::Phase::kBackward),
                            gemm({kBwdInput}, graph::Phase::kBackward),
                            tp_coll(graph::CollType::kAllReduce, {1}, graph::Phase::kBackward),
                            gemm({3}, graph::Phase::kBackward)},
                           1);
  const double t = 2.0;
  const double c = 3.0;
  EXPECT_DOUBLE_EQ(makespan(p, t, c), t + t + std::max(t, c) + t);
  EXPECT_EQ(serialize_backward_tp_comm(p), 1);
  EXPECT_EQ(p.ops[3].deps, (std::vector<std::int32_t>{1, 2}));
  EXPECT_DOUBLE_EQ(makespan(p, t, c), 4 * t + c);
  EXPECT_EQ(serialize_backward_tp_comm(p), 0);  // idempotent
}

}  // namespace
}  // namespace tessera::synth::parallel
