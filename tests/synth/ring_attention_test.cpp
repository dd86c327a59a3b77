// SPDX-License-Identifier: Apache-2.0
// Ring attention (cp_comm: p2p; docs/context_parallel.md §4) against formulas_moe_cp_zero.md
// §3.3, computed from the lowered layer and the synthesized graphs: the K/V bytes a rank sends
// per layer (forward, backward, recompute), the FLOPs per rank under causal load balancing
// and their split into the ring's steps, and the exchanges between ring neighbours.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "base/error.h"
#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/parallel/block_program.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using testing::cp_scenario;

using graph::CollType;
using graph::Phase;

constexpr double kSeq = 4096.0, kHeads = 16.0, kKvHeads = 4.0, kHeadDim = 64.0;

parallel::BlockProgram ring_layer(std::int64_t cp, Recompute mode = Recompute::kNone) {
  return parallel::lower(models::make_layer(cp_scenario(cp, CpComm::kP2P)), mode);
}

bool is_exchange(const parallel::ProgOp& p) {
  return p.node.kind == graph::NodeKind::kCollective && p.node.coll == CollType::kSendRecv;
}

double exchanged(const parallel::BlockProgram& b, Phase phase) {
  double sent = 0.0;
  for (const parallel::ProgOp& p : b.ops) {
    sent += is_exchange(p) && p.node.phase == phase ? p.node.bytes : 0.0;
  }
  return sent;
}

// M_kv = 2 b (s/cp) n_kv,r d_h B_a; forward (cp-1) M_kv, backward 2 (cp-1) M_kv (the K/V
// ring again and the dK/dV ring), and the recomputed forward (full recompute) (cp-1) M_kv
// more; no other collective runs over CP.
TEST(RingAttention, SendsTheKeysAndValuesRoundTheRing) {
  for (std::int64_t cp : {2, 4, 8}) {
    const auto c = static_cast<double>(cp);
    const double m_kv = 2.0 * (kSeq / c) * (kKvHeads / 2.0) * kHeadDim * 2.0;
    const parallel::BlockProgram b = ring_layer(cp, Recompute::kFull);
    EXPECT_DOUBLE_EQ(exchanged(b, Phase::kForward), (c - 1.0) * m_kv) << "cp " << cp;
    EXPECT_DOUBLE_EQ(exchanged(b, Phase::kBackward), 2.0 * (c - 1.0) * m_kv) << "cp " << cp;
    EXPECT_DOUBLE_EQ(exchanged(b, Phase::kRecompute), (c - 1.0) * m_kv) << "cp " << cp;
    for (const parallel::ProgOp& p : b.ops) {
      if (p.node.kind == graph::NodeKind::kCollective &&
          p.axis == static_cast<std::uint8_t>(Axis::kCP)) {
        EXPECT_TRUE(is_exchange(p)) << p.name << ": the ring needs no other CP collective";
        EXPECT_EQ(p.node.stream, graph::Stream::kCP) << p.name;
      }
    }
  }
}

// §3.3's load balance: cp steps of equal work, the first the causal diagonal, summing to the
// causal total over cp x t, 4 b (s^2 / (2 cp)) (n/t) d_h forward; each step after the first
// waits for the block the exchange before it brought.
TEST(RingAttention, StepsShareTheBalancedCausalWork) {
  for (std::int64_t cp : {2, 4}) {
    const auto c = static_cast<double>(cp);
    const parallel::BlockProgram b = ring_layer(cp);
    double flops = 0.0;
    int blocks = 0;
    int causal = 0;
    const double each = 4.0 * kSeq * kSeq / (2.0 * c) * (kHeads / 2.0) * kHeadDim / c;
    for (std::int32_t i = 0; i < b.n_fwd; ++i) {
      const parallel::ProgOp& p = b.ops[static_cast<std::size_t>(i)];
      if (p.node.op != graph::OpClass::kAttention) {
        continue;
      }
      flops += p.node.flops;
      EXPECT_DOUBLE_EQ(p.node.flops, each) << p.name;
      causal += p.node.causal;
      if (blocks > 0) {
        const bool waits = std::any_of(p.deps.begin(), p.deps.end(), [&](std::int32_t d) {
          return d >= 0 && is_exchange(b.ops[static_cast<std::size_t>(d)]);
        });
        EXPECT_TRUE(waits) << p.name;
      }
      ++blocks;
    }
    EXPECT_EQ(blocks, cp);
    EXPECT_EQ(causal, 1);
    EXPECT_DOUBLE_EQ(flops, 4.0 * kSeq * kSeq / (2.0 * c) * (kHeads / 2.0) * kHeadDim);
  }
}

// The same model FLOPs as gathering the keys (the MFU convention does not see the ring), and
// the same activations kept: the ring's buffers are freed within the layer.
TEST(RingAttention, CountsWhatTheAllGatherVariantCounts) {
  const parallel::BlockProgram ring = ring_layer(4);
  const parallel::BlockProgram gather =
      parallel::lower(models::make_layer(cp_scenario(4, CpComm::kAllGather)), Recompute::kNone);
  EXPECT_DOUBLE_EQ(ring.model_flops, gather.model_flops);
  EXPECT_DOUBLE_EQ(ring.saved_bytes, gather.saved_bytes);
  std::int64_t alloc = 0;
  std::int64_t freed = 0;
  for (const parallel::ProgOp& p : ring.ops) {
    alloc += p.node.comm_alloc;
    freed += p.node.comm_free;
  }
  EXPECT_GT(alloc, 0);
  EXPECT_EQ(alloc, freed);
}

// Per rank, every exchange runs over the rank's CP group, whose ring order is the CP ranks'
// (each sends to the next and the last to the first): cp - 1 forward and 2 (cp - 1) backward
// per layer and microbatch.
TEST(RingAttention, ExchangesRunOverTheContextParallelGroup) {
  Scenario s = cp_scenario(4, CpComm::kP2P);
  s.training.global_batch = 2;
  check_or_throw(s);
  const graph::ExecGraph g = synthesize(s, {.share_rank_classes = false});
  for (std::int32_t r = 0; r < g.num_ranks; ++r) {
    int forward = 0;
    int backward = 0;
    for (const graph::Node& n : g.graph_of(r).nodes) {
      if (n.kind != graph::NodeKind::kCollective || n.coll != CollType::kSendRecv) {
        continue;
      }
      const graph::Group& grp = g.groups[static_cast<std::size_t>(n.group)];
      EXPECT_EQ(grp.kind, graph::GroupKind::kCP);
      ASSERT_EQ(grp.ranks.size(), 4U);
      EXPECT_NE(std::find(grp.ranks.begin(), grp.ranks.end(), r), grp.ranks.end());
      forward += n.phase == Phase::kForward;
      backward += n.phase == Phase::kBackward;
    }
    const auto layers_mb = static_cast<int>(s.model.layers * s.microbatches());
    EXPECT_EQ(forward, 3 * layers_mb) << "rank " << r;
    EXPECT_EQ(backward, 6 * layers_mb) << "rank " << r;
  }
}

}  // namespace
}  // namespace tessera::synth
