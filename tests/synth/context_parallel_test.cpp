// SPDX-License-Identifier: Apache-2.0
// Context parallelism (docs/context_parallel.md) against formulas_moe_cp_zero.md §3, computed
// from the synthesized layer: the K/V bytes a rank sends per layer for each cp_comm, the
// attention FLOPs per rank under causal load balancing, activation memory divided by cp, and
// the input errors.
#include <gtest/gtest.h>

#include <string>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/parallel/block_program.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using testing::cp_scenario;

using graph::CollType;
using graph::Phase;
using stg::OpKind;

constexpr double kSeq = 4096.0, kHeads = 16.0, kKvHeads = 4.0, kHeadDim = 64.0;

// Bytes one rank sends in the layer's CP collectives of `phase` ((cp-1)/cp of each buffer).
double cp_sent(const models::Block& b, Phase phase, double cp) {
  double sent = 0.0;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.kind == OpKind::kCollective && op.axis == static_cast<std::uint8_t>(Axis::kCP) &&
        op.phase == phase) {
      sent += (cp - 1.0) / cp * op.bytes;
    }
  }
  return sent;
}

// §3.3: M_kv = 2 b (s/cp) n_kv,r d_h B_a; forward (cp-1) M_kv, backward 2 (cp-1) M_kv (the
// gather again and the reduce-scatter of dK, dV).
TEST(ContextParallel, AllGatherSendsTheKeysAndValuesOfTheOtherChunks) {
  for (std::int64_t cp : {2, 4, 8}) {
    const auto c = static_cast<double>(cp);
    const models::Block b = models::make_layer(cp_scenario(cp, CpComm::kAllGather));
    const double m_kv = 2.0 * (kSeq / c) * (kKvHeads / 2.0) * kHeadDim * 2.0;
    EXPECT_DOUBLE_EQ(cp_sent(b, Phase::kForward, c), (c - 1.0) * m_kv) << "cp " << cp;
    EXPECT_DOUBLE_EQ(cp_sent(b, Phase::kBackward, c), 2.0 * (c - 1.0) * m_kv) << "cp " << cp;
    int reduce_scatters = 0;
    for (const stg::Op& op : b.graph.ops()) {
      reduce_scatters += op.kind == OpKind::kCollective && op.coll == CollType::kReduceScatter &&
                         op.axis == static_cast<std::uint8_t>(Axis::kCP);
    }
    EXPECT_EQ(reduce_scatters, 2) << "dK and dV";
  }
}

// §3.4: each direction (cp-1)/cp b (s/cp) (2 n_r + 2 n_kv,r) d_h B_a: Q, K, V before the
// attention and O after it; dO, then dQ, dK, dV in the backward.
TEST(ContextParallel, UlyssesAllToAllsTradeSequenceForHeads) {
  for (std::int64_t cp : {2}) {
    const auto c = static_cast<double>(cp);
    const models::Block b = models::make_layer(cp_scenario(cp, CpComm::kA2A));
    const double n_r = kHeads / 2.0;
    const double kv_r = kKvHeads / 2.0;
    const double each = (c - 1.0) / c * (kSeq / c) * (2.0 * n_r + 2.0 * kv_r) * kHeadDim * 2.0;
    EXPECT_DOUBLE_EQ(cp_sent(b, Phase::kForward, c), each);
    EXPECT_DOUBLE_EQ(cp_sent(b, Phase::kBackward, c), each);
    for (const stg::Op& op : b.graph.ops()) {
      if (op.kind == OpKind::kCollective && op.axis == static_cast<std::uint8_t>(Axis::kCP)) {
        EXPECT_EQ(op.coll, CollType::kAllToAll) << op.name;
      }
    }
  }
}

// §3.1: with load balancing every rank's forward core does 4 b (s^2 / (2 cp)) (n/t) d_h, the
// causal total over cp x t, whichever way the keys arrive.
TEST(ContextParallel, AttentionFlopsPerRankAreTheCausalTotalOverCpTimesTp) {
  for (CpComm comm : {CpComm::kAllGather, CpComm::kA2A}) {
    for (std::int64_t cp : {1, 2}) {
      const auto c = static_cast<double>(cp);
      const models::Block b = models::make_layer(cp_scenario(cp, comm));
      double flops = 0.0;
      for (const stg::Op& op : b.graph.ops()) {
        flops += op.kind == OpKind::kAttention ? op.flops : 0.0;
      }
      EXPECT_DOUBLE_EQ(flops, 4.0 * kSeq * kSeq / (2.0 * c) * (kHeads / 2.0) * kHeadDim);
    }
  }
}

// §3.5: every activation a layer keeps is sharded along the sequence; the gathered keys and
// values are not kept (the backward gathers them again). Ulysses keeps one more copy of the
// attention output: the kernel's, in heads-for-sequence layout, beside the projection's
// input after the all-to-all back (at cp = 1 they are one tensor).
TEST(ContextParallel, ActivationMemoryDividesByCp) {
  auto saved = [](std::int64_t cp, CpComm comm) {
    return parallel::lower(models::make_layer(cp_scenario(cp, comm)), Recompute::kNone).saved_bytes;
  };
  const double one = saved(1, CpComm::kAllGather);
  EXPECT_DOUBLE_EQ(saved(2, CpComm::kAllGather) * 2.0, one);
  const double attention_out = (kSeq / 2.0) * (kHeads / 2.0) * kHeadDim * 2.0;
  EXPECT_DOUBLE_EQ(saved(2, CpComm::kA2A), one / 2.0 + attention_out);
}

// The weights are whole on every CP rank: the gradient buckets are reduced over data and
// context parallelism together (Megatron's data-parallel group with CP), the K/V collectives
// run over the CP group.
TEST(ContextParallel, GradientsReduceOverDpTimesCp) {
  Scenario s = cp_scenario(2, CpComm::kAllGather);
  s.parallel.tp = 1;
  s.parallel.dp = 2;
  s.training.global_batch = 4;
  s.cluster.devices = 4;
  check_or_throw(s);
  const graph::ExecGraph g = synthesize(s);
  int buckets = 0;
  int cp_collectives = 0;
  for (const graph::Node& n : g.graph_of(0).nodes) {
    if (n.kind != graph::NodeKind::kCollective) {
      continue;
    }
    const graph::Group& grp = g.groups[static_cast<std::size_t>(n.group)];
    if (grp.kind == graph::GroupKind::kCP) {
      ++cp_collectives;
      EXPECT_EQ(grp.ranks.size(), 2U);
    } else if (n.stream == graph::Stream::kDP) {
      ++buckets;
      EXPECT_EQ(grp.ranks.size(), 4U);
      EXPECT_EQ(grp.kind, graph::GroupKind::kDP);
    }
  }
  EXPECT_GT(buckets, 0);
  // Per layer and microbatch: K and V gathered forward, gathered again and reduce-scattered
  // backward.
  EXPECT_EQ(cp_collectives, 2 * static_cast<int>(s.microbatches()) * 6);
}

TEST(ContextParallel, BadInputNamesTheKey) {
  auto first = [](Scenario s) {
    const auto v = validate(s);
    return v.empty() ? std::string() : v[0].key + ": " + v[0].message;
  };
  Scenario s = testing::gpt_scenario_unchecked(2, 1024, 16, 2, 1, 1);
  s.training.attention = AttentionKernel::kFlash;
  s.parallel.cp_comm = CpComm::kAllGather;
  EXPECT_EQ(first(s),
            "parallelism.cp_comm: cp_comm chooses how context-parallel attention communicates; "
            "it needs cp > 1");
  s.parallel.cp = 2;
  s.cluster.devices = 4;
  s.training.seq_len = 2046;
  EXPECT_EQ(first(s),
            "training.seq_len: seq_len=2046 is not divisible by 2 x cp = 4: context parallelism "
            "cuts each sequence into 2 x cp chunks (Megatron's load balancing)");
  s.training.seq_len = 2048;
  s.model.kv_heads = 2;
  s.parallel.cp_comm = CpComm::kA2A;
  EXPECT_EQ(first(s),
            "parallelism.cp: cp_comm: a2a gives each rank 1/cp of its key-value heads, but a "
            "tensor-parallel rank holds 1 (model.kv_heads/tp), which cp=2 does not divide");
  s.parallel.cp_comm.reset();  // p2p, Megatron's default: ring attention has no head rule
  EXPECT_EQ(first(s), "");
  s.parallel.cp_comm = CpComm::kAllGather;
  s.training.attention = AttentionKernel::kUnfused;
  EXPECT_EQ(first(s),
            "training.attention: context parallelism (cp_comm: allgather) runs fused attention "
            "(Transformer Engine's); attention: unfused does not");
}

}  // namespace
}  // namespace tessera::synth
