// SPDX-License-Identifier: Apache-2.0
// Sliding-window attention (docs/sliding_window.md) against its closed form: with s queries
// and keys and a causal window of w keys, query i attends to min(i + 1, w) keys, s w - w^2/2
// pairs in all, each pair 2 (dq + dv) FLOPs forward; the MFU convention counts s w. Layers
// alternate by model.full_attention_every.
#include <gtest/gtest.h>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using stg::OpKind;

constexpr double kSeq = 4096.0, kLocalHeads = 8.0, kHeadDim = 64.0;  // cp_scenario's, on TP2

struct AttentionCosts {
  double forward = 0.0, backward = 0.0, model_forward = 0.0;
};

AttentionCosts attention_costs(const models::Block& b) {
  AttentionCosts c;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.cls != graph::OpClass::kAttention) {
      continue;
    }
    if (op.phase == graph::Phase::kForward) {
      c.forward += op.flops;
      c.model_forward += op.model_flops;
    } else {
      c.backward += op.flops;
    }
  }
  return c;
}

// Four layers of cp_scenario's with 128-token windows on every other layer, as GPT-OSS has.
Scenario gpt_oss_pattern() {
  Scenario s = testing::cp_scenario(1, CpComm::kAllGather);
  s.model.layers = 4;
  s.model.sliding_window = 128;
  s.model.full_attention_every = 2;
  check_or_throw(s);
  return s;
}

TEST(SlidingWindow, AttentionFlopsAreTheWindowedPairs) {
  const Scenario s = testing::cp_scenario(1, CpComm::kAllGather);
  for (double w : {1.0, 128.0, 1000.0}) {
    const AttentionCosts c =
        attention_costs(models::make_layer(s, true, false, static_cast<std::int64_t>(w)));
    const double per_pair = 4.0 * kLocalHeads * kHeadDim;  // QK^T and PV, 2 FLOPs a product
    EXPECT_DOUBLE_EQ(c.forward, per_pair * (kSeq * w - w * w / 2.0)) << "window " << w;
    EXPECT_DOUBLE_EQ(c.model_forward, per_pair * kSeq * w) << "window " << w;
    EXPECT_DOUBLE_EQ(c.backward, 2.5 * c.forward) << "window " << w;
  }
}

TEST(SlidingWindow, AWindowAsLongAsTheSequenceIsCausalAttention) {
  const Scenario s = testing::cp_scenario(1, CpComm::kAllGather);
  const AttentionCosts full = attention_costs(models::make_layer(s));
  for (std::int64_t w : {4096, 100000}) {
    const AttentionCosts c = attention_costs(models::make_layer(s, true, false, w));
    EXPECT_DOUBLE_EQ(c.forward, full.forward) << "window " << w;
    EXPECT_DOUBLE_EQ(c.model_forward, full.model_forward) << "window " << w;
  }
  EXPECT_DOUBLE_EQ(full.forward, 4.0 * kLocalHeads * kHeadDim * kSeq * kSeq / 2.0);
}

// GPT-OSS's pattern: layers 0, 2, ... slide, layers 1, 3, ... see the whole sequence; each
// windowed layer's attention kernel ramps over its window, not the sequence.
TEST(SlidingWindow, EveryNthLayerAttendsToTheWholeSequence) {
  Scenario s = gpt_oss_pattern();
  const StepPrograms p = build_programs(s);
  for (std::int64_t l = 0; l < 4; ++l) {
    const bool windowed = l % 2 == 0;
    EXPECT_EQ(&p.of_layer(l), windowed ? p.program_of({.window = 128}) : &p.layer) << "layer " << l;
  }
  ASSERT_NE(p.program_of({.window = 128}), nullptr);
  for (const parallel::ProgOp& op : p.program_of({.window = 128})->ops) {
    if (op.node.op == graph::OpClass::kAttention) {
      EXPECT_EQ(op.node.gemm.n, 128) << op.name;
      EXPECT_TRUE(op.node.causal) << op.name;
    }
  }
  s.model.full_attention_every = 0;  // every layer windowed (Mistral 7B)
  const StepPrograms all = build_programs(s);
  EXPECT_EQ(&all.of_layer(1), all.program_of({.window = 128}));
}

// The report's causal MFU subtracts half of 12 B w^2 (heads x head_dim) per windowed layer
// (the MFU convention's s w less the computed s w - w^2/2, doubled), 12 B s^2 (...) per full
// layer.
TEST(SlidingWindow, CausalMfuDiscountsTheWindowsTriangle) {
  Scenario s = gpt_oss_pattern();
  const graph::ExecGraph g = synthesize(s);
  const double b = static_cast<double>(s.training.global_batch);
  const double width = 16.0 * kHeadDim;
  EXPECT_DOUBLE_EQ(g.info.causal_attention_flops,
                   12.0 * b * width * (2.0 * 128.0 * 128.0 + 2.0 * kSeq * kSeq));
}

}  // namespace
}  // namespace tessera::synth
