// SPDX-License-Identifier: Apache-2.0
// FP8 training in the synthesized graph (docs/fp8.md), against closed forms: the memory FP8
// adds (weight copies) and saves (FP8 instead of bf16 linear inputs kept for backward) per
// rank, and the kernels it adds per layer and microbatch, with their bytes, per recipe.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/parallel/block_program.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

constexpr std::int64_t kH = 256;  // hidden; 4 heads, ffn 4h, GeLU, 128 tokens, tp 2
constexpr std::int64_t kTokens = 128;
constexpr std::int64_t kTp = 2;

Scenario small(Fp8Recipe recipe, const std::string& hardware, bool sp = false) {
  Scenario s = testing::gpt_scenario_unchecked(2, kH, 4, kTp, 1, 1);
  s.training.seq_len = kTokens;
  s.training.global_batch = 2;
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  s.training.fp8 = recipe;
  s.parallel.sp = sp;
  s.cluster.hardware = hardware;
  s.cluster.topology = topology::load_topology_preset("single-node", {});
  check_or_throw(s);
  return s;
}

// (a) Saved activations: bf16 keeps the four linear inputs in bf16 (2 bytes); FP8 keeps
// FP8 copies (1 byte) of the norm outputs (N_h each, the local shard with SP) and of the MLP
// activation (N_f), but the attention output stays saved in bf16 for the flash-attention
// backward, next to its FP8 copy (N_c): saved(bf16) - saved(fp8) = 2 N_h + N_f - N_c.
TEST(Fp8Memory, SavedActivationsAgainstTheClosedForm) {
  for (bool sp : {false, true}) {
    for (const char* hw : {"h100-sxm", "b200"}) {
      SCOPED_TRACE(std::string(hw) + (sp ? " sp" : ""));
      auto saved = [&](Fp8Recipe r) {
        Scenario s = small(r, hw, sp);
        return parallel::lower(models::make_layer(s), s.training.recompute).saved_bytes;
      };
      const double n_h = static_cast<double>(kTokens * kH) / (sp ? kTp : 1);
      const double n_c = static_cast<double>(kTokens * kH) / kTp;
      const double n_f = static_cast<double>(kTokens * 4 * kH) / kTp;
      EXPECT_DOUBLE_EQ(saved(Fp8Recipe::kNone) - saved(Fp8Recipe::kDelayed), 2 * n_h + n_f - n_c);
      EXPECT_DOUBLE_EQ(saved(Fp8Recipe::kNone) - saved(Fp8Recipe::kBlockwise), 2 * n_h + n_f - n_c);
    }
  }
}

// (a) Static memory per rank: the four linear weights (12 h^2 / tp elements per layer) in FP8,
// one byte each per copy (two on Hopper: row-wise and transposed; one on Blackwell), plus
// the scaling metadata: delayed 5 quantizers x (scale + 1 history entry) x 4 bytes per GEMM,
// blockwise a 4-byte scale per 128 x 128 block and copy.
TEST(Fp8Memory, WeightCopiesAgainstTheClosedForm) {
  const double w = 12.0 * kH * kH / kTp * 2;  // two layers on the rank
  struct Row {
    Fp8Recipe recipe;
    const char* hw;
    double extra;
  };
  for (const Row& r : {Row{Fp8Recipe::kDelayed, "h100-sxm", 2 * w + 2 * 4 * 40.0},
                       Row{Fp8Recipe::kDelayed, "b200", w + 2 * 4 * 40.0},
                       Row{Fp8Recipe::kTensorwise, "h200-sxm", 2 * w + 2 * 4 * 20.0},
                       Row{Fp8Recipe::kBlockwise, "h100-sxm", 2 * w * (1 + 4.0 / (128 * 128))},
                       Row{Fp8Recipe::kBlockwise, "b200", w * (1 + 4.0 / (128 * 128))}}) {
    SCOPED_TRACE(std::string(r.hw) + " " + std::string(fp8_recipe_name(r.recipe)));
    graph::ExecGraph bf16 = synthesize(small(Fp8Recipe::kNone, r.hw));
    graph::ExecGraph fp8 = synthesize(small(r.recipe, r.hw));
    const graph::RankGraph& a = bf16.graph_of(0);
    const graph::RankGraph& b = fp8.graph_of(0);
    EXPECT_NEAR(static_cast<double>(b.weight_memory - a.weight_memory), r.extra, 1.0);
    EXPECT_EQ(b.static_memory - a.static_memory, b.weight_memory - a.weight_memory);
    EXPECT_EQ(b.grad_memory, a.grad_memory);  // gradients and optimizer state stay as in bf16
  }
}

struct Kernel {
  int count = 0;
  double bytes = 0.0;
};

// The FP8 ops of one layer block, by the part of their name after the linear's.
std::map<std::string, Kernel> fp8_kernels(const Scenario& s) {
  models::Block b = models::make_layer(s);
  std::map<std::string, Kernel> out;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.kind != stg::OpKind::kFp8Cast && op.kind != stg::OpKind::kFp8Amax) {
      continue;
    }
    std::string kind = op.name.substr(op.name.find(".fp8.") + 1);
    out[kind].count += 1;
    out[kind].bytes += op.bytes;
  }
  return out;
}

// (b) Per layer and microbatch, with the four linears' inputs of N = 2 N_h + N_c + N_f
// elements and their output gradients of M = N_q + 2 N_h' + N_e (QKV, proj, fc1, fc2 outputs):
// a cast reads bf16 (2 bytes) and writes 1 byte per copy (plus blockwise scales, 4/128 per
// element and copy); a current-scaling amax pass reads bf16 and writes 4 bytes.
TEST(Fp8Kernels, CountAndBytesPerRecipe) {
  const double n = 2.0 * kTokens * kH + static_cast<double>(kTokens * kH) / kTp +
                   static_cast<double>(kTokens * 4 * kH) / kTp;
  const double m = static_cast<double>(kTokens * 3 * kH) / kTp + 2.0 * kTokens * kH +
                   static_cast<double>(kTokens * 4 * kH) / kTp;
  {
    auto k = fp8_kernels(small(Fp8Recipe::kDelayed, "h100-sxm"));  // Hopper: transposes
    ASSERT_EQ(k.size(), 2U);
    EXPECT_EQ(k["fp8.cast_transpose"].count, 4);
    EXPECT_DOUBLE_EQ(k["fp8.cast_transpose"].bytes, 4.0 * n);
    EXPECT_EQ(k["fp8.cast_transpose_grad"].count, 4);
    EXPECT_DOUBLE_EQ(k["fp8.cast_transpose_grad"].bytes, 4.0 * m);
  }
  {
    auto k = fp8_kernels(small(Fp8Recipe::kDelayed, "b200"));  // Blackwell: no transposes
    ASSERT_EQ(k.size(), 2U);
    EXPECT_EQ(k["fp8.cast"].count, 4);
    EXPECT_DOUBLE_EQ(k["fp8.cast"].bytes, 3.0 * n);
    EXPECT_DOUBLE_EQ(k["fp8.cast_grad"].bytes, 3.0 * m);
  }
  {
    auto k = fp8_kernels(small(Fp8Recipe::kTensorwise, "b200"));
    ASSERT_EQ(k.size(), 4U);
    EXPECT_EQ(k["fp8.amax"].count, 4);
    EXPECT_DOUBLE_EQ(k["fp8.amax"].bytes, 2.0 * n + 4 * 4.0);
    EXPECT_EQ(k["fp8.amax_grad"].count, 4);
    EXPECT_DOUBLE_EQ(k["fp8.amax_grad"].bytes, 2.0 * m + 4 * 4.0);
    EXPECT_DOUBLE_EQ(k["fp8.cast"].bytes, 3.0 * n + 4 * 4.0);  // the cast reads the amax
  }
  {
    // Blockwise: the 1x128 tiles run along the other dimension in the weight gradient, so
    // a column-wise copy is needed on Blackwell too.
    auto k = fp8_kernels(small(Fp8Recipe::kBlockwise, "b200"));
    ASSERT_EQ(k.size(), 2U);
    EXPECT_DOUBLE_EQ(k["fp8.cast_transpose"].bytes, (4.0 + 2 * 4.0 / 128) * n);
    EXPECT_DOUBLE_EQ(k["fp8.cast_transpose_grad"].bytes, (4.0 + 2 * 4.0 / 128) * m);
  }
}

// (b) With sequence parallelism the row-parallel layers' (proj, fc2) output gradients arrive
// sharded over TP: Transformer Engine quantizes the local shard, so the casts read
// M_sp = N_q + 2 N_h / tp + N_e elements, and gathers the FP8 copies; the row-wise gather
// feeds the input-gradient GEMM, which the userbuffers' ring exchange splits (two parts),
// while the weight-gradient GEMM is left whole.
TEST(Fp8Kernels, SequenceParallelGradientsAreQuantizedBeforeTheirGather) {
  const double m_sp = static_cast<double>(kTokens * 3 * kH) / kTp +
                      2.0 * static_cast<double>(kTokens * kH) / kTp +
                      static_cast<double>(kTokens * 4 * kH) / kTp;
  EXPECT_DOUBLE_EQ(
      fp8_kernels(small(Fp8Recipe::kDelayed, "h100-sxm", true)).at("fp8.cast_transpose_grad").bytes,
      4.0 * m_sp);
  const StepPrograms progs = build_programs(small(Fp8Recipe::kDelayed, "h100-sxm", true));
  std::map<std::string, const parallel::ProgOp*> ops;
  for (const parallel::ProgOp& op : progs.layer.ops) {
    ops[op.name] = &op;
  }
  for (const std::string linear : {"attn.proj", "mlp.fc2"}) {
    SCOPED_TRACE(linear);
    const std::string gather = linear + ".fp8.cast_transpose_grad.all_gather";
    ASSERT_EQ(ops.count(gather), 1U);
    EXPECT_EQ(ops.at(gather)->node.dtype, base::DType::kFP8);
    EXPECT_EQ(ops.count(linear + ".dgrad.part1") + ops.count(linear + ".dgrad.part2"), 2U);
    EXPECT_EQ(ops.count(linear + ".wgrad"), 1U);
  }
}

// (b) The GEMMs: the linears' forward, dgrad and wgrad run in FP8 (12 per layer); the
// attention core, the LM head and everything else stay in bf16.
TEST(Fp8Kernels, WhichGemmsRunInFp8) {
  Scenario s = small(Fp8Recipe::kDelayed, "h100-sxm");
  const StepPrograms progs = build_programs(s);
  auto fp8_gemms = [](const parallel::BlockProgram& p) {
    int n = 0;
    for (const parallel::ProgOp& op : p.ops) {
      n += op.node.op == graph::OpClass::kGemm && op.node.dtype == base::DType::kFP8 ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(fp8_gemms(progs.layer), 12);
  EXPECT_EQ(fp8_gemms(progs.head), 0);
  EXPECT_EQ(fp8_gemms(progs.embed), 0);
  for (const parallel::ProgOp& op : progs.layer.ops) {
    if (op.node.op == graph::OpClass::kAttention) {
      EXPECT_EQ(op.node.dtype, base::DType::kBF16) << op.name;
    }
  }
}

// The step says whether its FP8 GEMMs apply MX block scales (timed at gemm.mxfp8_rate): only
// with the MXFP8 recipe.
TEST(Fp8Kernels, OnlyMxfp8MarksTheStepBlockScaled) {
  EXPECT_TRUE(synthesize(small(Fp8Recipe::kMxfp8, "b200")).info.fp8_block_scaled);
  EXPECT_FALSE(synthesize(small(Fp8Recipe::kTensorwise, "b200")).info.fp8_block_scaled);
  EXPECT_FALSE(synthesize(small(Fp8Recipe::kBlockwise, "h100-sxm")).info.fp8_block_scaled);
  EXPECT_FALSE(synthesize(small(Fp8Recipe::kNone, "b200")).info.fp8_block_scaled);
}

// Per step: each layer's weights are quantized once (before its first forward), and delayed
// scaling updates amax histories once per chunk, microbatch and direction.
TEST(Fp8Kernels, PerStepNodes) {
  Scenario s = small(Fp8Recipe::kDelayed, "h100-sxm");
  s.training.global_batch = 4;  // 4 microbatches
  graph::ExecGraph g = synthesize(s);
  std::map<std::string, int> count;
  for (const graph::Node& n : g.graph_of(0).nodes) {
    const std::string& name = g.names[n.name];
    if (name.find("fp8.") != std::string::npos && n.op == graph::OpClass::kCopy) {
      ++count[name.substr(name.find("fp8."))];
    }
  }
  EXPECT_EQ(count["fp8.cast_transpose_weight"], 2);   // two layers, once each
  EXPECT_EQ(count["fp8.amax_update"], 2 * 4);         // forward + backward, 4 microbatches
  EXPECT_EQ(count["fp8.cast_transpose"], 2 * 4 * 4);  // 4 linears x 2 layers x 4 microbatches
}

}  // namespace
}  // namespace tessera::synth
