// SPDX-License-Identifier: Apache-2.0
// DeepSeek's multi-head latent attention (docs/mla.md) against formulas_moe_cp_zero.md §2,
// computed from the synthesized graph: parameters, FLOPs per token, and DeepSeek-V3 as a
// whole against Megatron's FLOP count.
#include <gtest/gtest.h>

#include <string>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/scenario/model_presets.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using stg::OpKind;

// A small latent-attention model: n = 8 heads of 48 + 16 wide queries and keys and 32 wide
// values, latents of 96 (queries) and 64 (keys and values), over a 256-wide stream.
Scenario mla_scenario(std::int64_t tp, std::int64_t q_lora_rank) {
  Scenario s = testing::gpt_scenario_unchecked(2, 256, 8, tp, 1, 1);
  s.model.activation = Activation::kSwiglu;
  s.model.norm = NormKind::kRmsNorm;
  s.model.bias = false;
  s.model.dropout = 0.0;
  s.model.mla = {q_lora_rank, 64, 48, 16, 32};
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  s.training.seq_len = 512;
  s.parallel.sp = tp > 1;
  check_or_throw(s);
  return s;
}

// §2: P = d'_c(h + n(d_qk + d_r)) + h(d_c + d_r) + d_c·n(d_qk + d_v) + n·d_v·h + d'_c + d_c;
// per rank the up projections and o_proj are /tp, the down projections and norms whole.
double mla_params(double tp, double q_lora) {
  const double h = 256.0, n = 8.0, kc = 64.0, nope = 48.0, rope = 16.0, v = 32.0;
  const double queries = q_lora > 0.0 ? q_lora * h + q_lora * n * (nope + rope) / tp + q_lora
                                      : h * n * (nope + rope) / tp;
  return queries + h * (kc + rope) + kc * n * (nope + v) / tp + kc + n * v * h / tp;
}

TEST(Mla, ParametersPerRankMatchTheClosedForm) {
  for (std::int64_t tp : {1, 2}) {
    for (std::int64_t q_lora : {0, 96}) {
      Scenario s = mla_scenario(tp, q_lora);
      double attn = 0.0;
      const models::Block b = models::make_layer(s);
      for (const stg::Tensor& t : b.graph.tensors()) {
        if (t.weight && t.name.starts_with("attn.") && t.name != "attn.norm.weight") {
          attn += static_cast<double>(
              b.graph.elements_of(static_cast<stg::TensorId>(&t - b.graph.tensors().data())));
        }
      }
      EXPECT_DOUBLE_EQ(attn, mla_params(static_cast<double>(tp), static_cast<double>(q_lora)))
          << "tp " << tp << " q_lora " << q_lora;
      // The whole model on one rank is ModelConfig::parameters().
      if (tp == 1) {
        const StepPrograms p = build_programs(s);
        EXPECT_DOUBLE_EQ(
            p.embed.params + p.head.params + p.sum_layers(&parallel::BlockProgram::params),
            s.model.parameters());
      }
    }
  }
}

// §2: forward FLOPs per token per layer: 2P for the projections (norms aside), each /tp on a
// rank (its sequence shard through the replicated down projections), and the core's
// 2·s·n·(d_qk + d_r + d_v) without causal halving.
TEST(Mla, ForwardFlopsPerTokenMatchTheClosedForm) {
  for (std::int64_t tp : {1, 2}) {
    Scenario s = mla_scenario(tp, 96);
    const models::Block b = models::make_layer(s);
    double gemm = 0.0;
    double core = 0.0;
    for (const stg::Op& op : b.graph.ops()) {
      if (op.phase != graph::Phase::kForward || !op.name.starts_with("attn.")) {
        continue;
      }
      gemm += op.kind == OpKind::kEinsum ? op.flops : 0.0;
      core += op.kind == OpKind::kAttention ? op.model_flops : 0.0;
    }
    const double tokens = 512.0;
    const double t = static_cast<double>(tp);
    const double norms = 96.0 + 64.0;
    EXPECT_DOUBLE_EQ(gemm, 2.0 * tokens * (mla_params(1.0, 96.0) - norms) / t) << "tp " << tp;
    EXPECT_DOUBLE_EQ(core, tokens * 2.0 * 512.0 * 8.0 * (64.0 + 32.0) / t) << "tp " << tp;
  }
}

// §2, activation memory: per token and layer, bf16, flash, no TP, the latent attention keeps
// 5h + 4d'_c + 4d_c + 4n(d_qk + d_r) + 4n·d_v bytes and MHA 5h + 4q + 4kv (FlagScale's
// estimator): the same MLP around either, the difference is the attention's, plus the RoPE
// key (2·d_r), which stays with the latent as Megatron's torch.split view does.
TEST(Mla, SavedActivationsMatchTheClosedForm) {
  Scenario s = mla_scenario(1, 96);
  Scenario mha = s;
  mha.model.mla = {};
  check_or_throw(mha);
  const double h = 256.0, n = 8.0;
  const double mla_form = 5.0 * h + 4.0 * 96.0 + 4.0 * 64.0 + 4.0 * n * 64.0 + 4.0 * n * 32.0;
  const double mha_form = 5.0 * h + 4.0 * h + 4.0 * h;
  const double tokens = 512.0;
  EXPECT_DOUBLE_EQ(
      (build_programs(s).layer.saved_bytes - build_programs(mha).layer.saved_bytes) / tokens,
      mla_form - mha_form + 2.0 * 16.0);
}

// DeepSeek-V2-Lite (no query latent, two shared experts): its layers build, and the whole
// model on one rank is ModelConfig::parameters(), 15.71e9 (the released checkpoint: 15.7B).
// Building its MoE layer once read a layout through a reference the graph had moved.
TEST(Mla, DeepSeekV2LiteBuildsWholeModel) {
  Scenario s = testing::gpt_scenario_unchecked(27, 2048, 16, 1, 1, 1);
  s.model = *model_preset("deepseek-v2-lite");
  s.training.seq_len = 4096;
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  check_or_throw(s);
  const StepPrograms p = build_programs(s);
  EXPECT_DOUBLE_EQ(p.embed.params + p.head.params + p.sum_layers(&parallel::BlockProgram::params),
                   s.model.parameters());
  EXPECT_NEAR(s.model.parameters(), 15.71e9, 0.01e9);
}

// DeepSeek-V3 at s = 4096 (formulas_moe_cp_zero.md §1.1, from Megatron's
// num_floating_point_operations): 249.81e9 FLOPs per token, forward and backward, with the core
// at its causal half and without the router. Ours counts the core whole (+30.70e9) and the
// router GEMM (6·h·E per token in each of the 58 MoE layers). Its parameters: 671.03e9.
TEST(Mla, DeepSeekV3MatchesMegatronsCounts) {
  Scenario s = testing::gpt_scenario_unchecked(61, 7168, 128, 1, 1, 1);
  s.model = *model_preset("deepseek-v3");
  s.model.mtp_depth = 0;  // the closed form's "no MTP"
  s.training.seq_len = 4096;
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  check_or_throw(s);
  EXPECT_NEAR(s.model.parameters(), 671.03e9, 0.005e9);
  const StepPrograms p = build_programs(s);
  const double per_token = (p.embed.model_flops + p.head.model_flops +
                            p.sum_layers(&parallel::BlockProgram::model_flops)) /
                           4096.0;
  const double router = 6.0 * 7168.0 * 256.0 * 58.0;
  EXPECT_NEAR(per_token, 249.81e9 + 30.70e9 + router, 0.02e9);
}

}  // namespace
}  // namespace tessera::synth

namespace tessera::synth {
namespace {

// The program of a full-attention MoE layer.
const parallel::BlockProgram& moe_layer(const StepPrograms& p) {
  const parallel::BlockProgram* prog = p.program_of({.moe = true});
  EXPECT_NE(prog, nullptr);
  return prog != nullptr ? *prog : p.layer;
}

// Multi-token prediction (DeepSeek-V3 §2.2; Megatron's num_floating_point_operations counts
// its layer and the logits again, 6h·V per token): one module adds an MoE layer, the 2h -> h
// projection and a second pass through the output layer, per token 6(2h² + hV) FLOPs beside
// the layer's; its parameters are the layer's, the projection's and three norms'.
TEST(Mla, DeepSeekV3MultiTokenPredictionAddsALayerAndTheLogits) {
  Scenario s = testing::gpt_scenario_unchecked(61, 7168, 128, 1, 1, 1);
  s.model = *model_preset("deepseek-v3");
  ASSERT_EQ(s.model.mtp_depth, 1);
  s.training.seq_len = 4096;
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  check_or_throw(s);
  Scenario none = s;
  none.model.mtp_depth = 0;
  const StepPrograms with = build_programs(s);
  const StepPrograms without = build_programs(none);
  const double h = 7168.0;
  const double v = static_cast<double>(models::padded_vocab(s));
  const double tokens = 4096.0;
  EXPECT_NEAR(
      (with.head.model_flops - without.head.model_flops - moe_layer(with).model_flops) / tokens,
      6.0 * (2.0 * h * h + h * v), 1e-6 * h * v);
  EXPECT_DOUBLE_EQ(s.model.parameters() - none.model.parameters(),
                   moe_layer(with).params + 2.0 * h * h + 3.0 * h);
  // On one rank the embedding is shared: the head gains exactly the module's parameters.
  EXPECT_DOUBLE_EQ(with.head.params - without.head.params,
                   moe_layer(with).params + 2.0 * h * h + 3.0 * h);
}

}  // namespace
}  // namespace tessera::synth
