// SPDX-License-Identifier: Apache-2.0
// Kernels that depend on how the framework builds the layers and their gradients
// (docs/formulas.md §4.2), against closed forms on one GPT layer (hidden h, 4h FFN, GeLU,
// T tokens, tp 2, dropout): Megatron's local linear layers add the QKV bias in a kernel of
// its own and reduce the four bias gradients in kernels of their own; without gradient
// accumulation fusion every weight gradient is added to its main-gradient buffer by a kernel.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

constexpr double kH = 256;
constexpr double kT = 2048;  // seq_len x micro_batch 1
constexpr double kTp = 2;

Scenario layer_scenario(TransformerImpl impl, bool fusion, bool bias = true) {
  Scenario s = testing::gpt_scenario_unchecked(2, 256, 4, 2, 1, 1);  // fp16
  s.training.transformer_impl = impl;
  s.training.gradient_accumulation_fusion = fusion;
  s.model.bias = bias;
  check_or_throw(s);
  return s;
}

// name -> bytes of the layer's ops whose names end in `suffix`.
std::map<std::string, double> ops_ending(const models::Block& b, const std::string& suffix) {
  std::map<std::string, double> out;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.name.size() >= suffix.size() &&
        op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out[op.name] = op.bytes;
    }
  }
  return out;
}

TEST(FrameworkKernels, LocalLayersAddTheQkvBiasAndReduceEveryBiasGradient) {
  models::Block b = models::make_layer(layer_scenario(TransformerImpl::kLocal, true));
  const double qkv = kT * 3 * kH / kTp * 2.0;  // the QKV output, fp16
  std::map<std::string, double> fwd = ops_ending(b, "attn.qkv.bias");
  ASSERT_EQ(fwd.size(), 1U);
  EXPECT_DOUBLE_EQ(fwd.begin()->second, 2.0 * qkv);  // read and written
  // Each reduction reads the gradient the bias sees and writes the bias gradient.
  std::map<std::string, double> expect = {
      {"attn.qkv.bias.bwd", qkv + 3 * kH / kTp * 2.0},
      {"attn.residual.bias_grad", kT * kH * 2.0 + kH * 2.0},
      {"mlp.gelu.bias_grad", kT * 4 * kH / kTp * 2.0 + 4 * kH / kTp * 2.0},
      {"mlp.residual.bias_grad", kT * kH * 2.0 + kH * 2.0}};
  std::map<std::string, double> got = ops_ending(b, ".bias_grad");
  std::map<std::string, double> bwd = ops_ending(b, ".bias.bwd");
  got.insert(bwd.begin(), bwd.end());
  EXPECT_EQ(got, expect);
}

TEST(FrameworkKernels, TransformerEngineAndBiaslessModelsHaveNoBiasKernels) {
  for (const Scenario& s : {layer_scenario(TransformerImpl::kTransformerEngine, true),
                            layer_scenario(TransformerImpl::kLocal, true, false)}) {
    models::Block b = models::make_layer(s);
    EXPECT_TRUE(ops_ending(b, ".bias_grad").empty());
    EXPECT_TRUE(ops_ending(b, "attn.qkv.bias").empty());
  }
}

// Without fusion: one accumulation per weight, reading the fp16 gradient and reading and
// writing the main gradient (fp16 by default with fp16, 6 bytes an element; fp32: 10).
TEST(FrameworkKernels, UnfusedAccumulationAddsEachWeightGradientToItsBuffer) {
  const double elements = 12 * kH * kH / kTp + 2 * kH;  // four linear weights, two norm gammas
  for (bool fp32 : {false, true}) {
    Scenario s = layer_scenario(TransformerImpl::kTransformerEngine, false);
    s.training.grad_reduce_in_fp32 = fp32;
    models::Block b = models::make_layer(s);
    std::map<std::string, double> acc = ops_ending(b, ".grad_accum");
    EXPECT_EQ(acc.size(), 6U);
    double bytes = 0.0;
    for (const auto& [name, v] : acc) {
      bytes += v;
    }
    // The norms' gamma gradients are fp32 (norm backward accumulates them in fp32).
    const double norm_extra = 2 * kH * 2.0;
    EXPECT_DOUBLE_EQ(bytes, elements * (fp32 ? 10.0 : 6.0) + norm_extra) << fp32;
    for (const auto& wg : b.backward.weight_grads) {
      EXPECT_EQ(b.graph.tensor(wg.second).dtype, fp32 ? base::DType::kFP32 : base::DType::kFP16);
    }
  }
  EXPECT_TRUE(
      ops_ending(models::make_layer(layer_scenario(TransformerImpl::kTransformerEngine, true)),
                 ".grad_accum")
          .empty());
}

// Megatron's bytes per parameter (docs/user-guide/features/dist_optimizer.md): fp16
// parameters with fp16 gradients 20, or 4 + 16/d distributed; fp32 gradients 18, 6 + 12/d.
TEST(FrameworkKernels, StaticMemoryPerParameterFollowsTheGradientType) {
  for (bool fp32 : {false, true}) {
    for (bool dist : {false, true}) {
      Scenario s = testing::gpt_scenario_unchecked(2, 256, 4, 1, 1, 4);
      s.training.grad_reduce_in_fp32 = fp32;
      s.training.distributed_optimizer = dist;
      check_or_throw(s);
      graph::ExecGraph g = synthesize(s);
      const double p = s.model.parameters();
      const double expect = dist ? (fp32 ? 6.0 + 12.0 / 4 : 4.0 + 16.0 / 4) : (fp32 ? 18.0 : 20.0);
      EXPECT_NEAR(static_cast<double>(g.classes[0].static_memory) / p, expect, 1e-6)
          << fp32 << dist;
      EXPECT_NEAR(static_cast<double>(g.classes[0].grad_memory) / p, fp32 ? 4.0 : 2.0, 1e-6);
    }
  }
}

// The LM loss per logit element: Megatron's unfused cross-entropy reads the fp16 logits,
// writes their fp32 copy and runs max (read), subtract, exp, divide (read + write) and sum
// (read) over it: 2 + 36 bytes; backward scales the softmax in place and casts it back:
// 8 + 4 + 2. Fused: the logits and the fp32 softmax written and read once (2 + 8), 4 + 2.
TEST(FrameworkKernels, UnfusedCrossEntropyRunsPassByPass) {
  for (bool fused : {false, true}) {
    Scenario s = layer_scenario(TransformerImpl::kTransformerEngine, true);
    s.training.cross_entropy_fusion = fused;
    models::Block head = models::build_blocks(s).head;
    const double n = kT * static_cast<double>(models::padded_vocab(s)) / kTp;
    std::map<std::string, double> fwd = ops_ending(head, "loss");
    std::map<std::string, double> bwd = ops_ending(head, "loss.bwd");
    ASSERT_EQ(fwd.size(), 1U);
    ASSERT_EQ(bwd.size(), 1U);
    EXPECT_DOUBLE_EQ(fwd.begin()->second / n, fused ? 10.0 : 38.0);
    EXPECT_DOUBLE_EQ(bwd.begin()->second / n, fused ? 6.0 : 14.0);
  }
}

// PyTorch eager's RMSNorm and SwiGLU (docs/eager_elementwise.md), on one Llama-style layer
// in fp16 (X = 2 bytes; tp 2, no SP, so the norms see whole rows): the norm's chain adds
// 2X + 28 bytes per element forward and 3X + 48 backward over the fused kernel's x, gamma
// and y (x, dy, dx); SwiGLU's adds 2X and 4X per output element. LayerNorm stays one kernel.
TEST(FrameworkKernels, EagerNormsAndSwigluRunTheirOpChains) {
  std::map<std::string, double> fused;
  for (bool eager : {false, true}) {
    Scenario s = layer_scenario(TransformerImpl::kTransformerEngine, true, false);
    s.model.norm = NormKind::kRmsNorm;
    s.model.activation = Activation::kSwiglu;
    s.training.eager_elementwise = eager;
    models::Block b = models::make_layer(s);
    std::map<std::string, double> ops = ops_ending(b, "norm");
    for (const auto& [name, bytes] : ops_ending(b, ".bwd")) {
      ops[name] = bytes;
    }
    if (!eager) {
      fused = ops;
      continue;
    }
    const double rows = kT * kH;           // a norm's elements
    const double act = kT * 4 * kH / kTp;  // SwiGLU's output elements on a rank
    EXPECT_DOUBLE_EQ(ops["attn.norm"] - fused["attn.norm"], rows * (2 * 2 + 28));
    EXPECT_DOUBLE_EQ(ops["mlp.norm.bwd"] - fused["mlp.norm.bwd"], rows * (3 * 2 + 48));
    EXPECT_DOUBLE_EQ(ops["mlp.swiglu.bwd"] - fused["mlp.swiglu.bwd"], act * 4 * 2);
    EXPECT_DOUBLE_EQ(ops["attn.proj.bwd"], fused["attn.proj.bwd"]);  // GEMMs untouched
  }
  Scenario layer_norm = layer_scenario(TransformerImpl::kTransformerEngine, true, false);
  const double one_kernel = ops_ending(models::make_layer(layer_norm), "attn.norm")["attn.norm"];
  layer_norm.training.eager_elementwise = true;
  EXPECT_DOUBLE_EQ(ops_ending(models::make_layer(layer_norm), "attn.norm")["attn.norm"],
                   one_kernel);
}

}  // namespace
}  // namespace tessera::synth
