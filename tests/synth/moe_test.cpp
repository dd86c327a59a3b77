// SPDX-License-Identifier: Apache-2.0
// Mixture-of-experts layers (docs/moe.md) against the closed forms of
// formulas_moe_cp_zero.md §1 (Megatron-Core), computed from the synthesized tensor graph:
// FLOPs per token, parameters per rank, the dispatch and combine collectives' bytes, and
// which layers are MoE layers.
#include <gtest/gtest.h>

#include <string>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using stg::OpKind;

// A Mixtral-like decoder: SwiGLU, RMSNorm, GQA, no biases; 8 experts, top-2, one shared
// expert. s x k / (E x tp) is a whole number, so balanced routing is exact.
Scenario moe_scenario(std::int64_t tp, std::int64_t dp) {
  Scenario s = testing::gpt_scenario_unchecked(4, 512, 8, tp, 1, dp);
  s.model.activation = Activation::kSwiglu;
  s.model.norm = NormKind::kRmsNorm;
  s.model.bias = false;
  s.model.dropout = 0.0;
  s.model.kv_heads = 4;
  s.model.ffn = 1536;
  s.model.moe = {
      .experts = 8, .top_k = 2, .expert_ffn = 768, .shared_experts = 1, .shared_expert_ffn = 1024};
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  s.training.micro_batch = 2;
  s.training.global_batch = 4 * dp;
  s.parallel.sp = tp > 1;
  check_or_throw(s);
  return s;
}

struct Sums {
  double gemm_flops = 0.0;  // forward GEMMs, per rank
  double params = 0.0;
};

Sums forward_gemms(const models::Block& b) {
  Sums out;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.kind == OpKind::kEinsum && op.phase == graph::Phase::kForward) {
      out.gemm_flops += op.flops;
    }
  }
  out.params = b.params;
  return out;
}

// Forward FLOPs per token (§1.1): a dense MLP is 2g·h·f; an MoE MLP is the router 2h·E, the
// routed experts k·2g·h·f_e and the shared experts 2g·h·F_s (g = 3 GEMMs with SwiGLU). A rank
// runs 1/tp of each (its sequence shard through the router, the tp-sharded experts).
TEST(Moe, ForwardFlopsPerTokenMatchTheClosedForm) {
  for (std::int64_t tp : {1, 2}) {
    Scenario s = moe_scenario(tp, 1);
    const Sums dense = forward_gemms(models::make_layer(s));
    const Sums moe = forward_gemms(models::make_layer(s, true, true));
    const double h = 512.0;
    const double g = 3.0;
    const double tokens = 2.0 * 2048.0;  // micro_batch x seq_len
    const double dense_mlp = 2.0 * g * h * 1536.0;
    const double moe_mlp = 2.0 * h * 8.0 + 2.0 * 2.0 * g * h * 768.0 + 2.0 * g * h * 1024.0;
    EXPECT_DOUBLE_EQ(moe.gemm_flops - dense.gemm_flops,
                     tokens * (moe_mlp - dense_mlp) / static_cast<double>(tp))
        << "tp " << tp;
  }
}

// Parameters (§1.2): per MoE layer the routed experts g·h·f_e·E, the shared experts g·h·F_s
// and the router h·E replace the dense MLP's g·h·f; experts and shared experts are /tp, the
// router is replicated.
TEST(Moe, ParametersPerRankMatchTheClosedForm) {
  for (std::int64_t tp : {1, 2}) {
    Scenario s = moe_scenario(tp, 1);
    const double dense = models::make_layer(s).params;
    const double moe = models::make_layer(s, true, true).params;
    const double h = 512.0;
    const double t = static_cast<double>(tp);
    const double expect =
        h * 8.0 + (3.0 * h * 768.0 * 8.0 + 3.0 * h * 1024.0) / t - 3.0 * h * 1536.0 / t;
    EXPECT_DOUBLE_EQ(moe - dense, expect) << "tp " << tp;
  }
  // The whole model on one rank is ModelConfig::parameters().
  Scenario s = moe_scenario(1, 1);
  s.model.moe.first_dense_layers = 1;
  StepPrograms p = build_programs(s);
  double sum = p.embed.params + p.head.params + p.sum_layers(&parallel::BlockProgram::params);
  EXPECT_DOUBLE_EQ(sum, s.model.parameters());
  // With biases: the dense layers and the attention carry them, the experts do not.
  s.model.bias = true;
  p = build_programs(s);
  sum = p.embed.params + p.head.params + p.sum_layers(&parallel::BlockProgram::params);
  EXPECT_DOUBLE_EQ(sum, s.model.parameters());
}

// Dispatch and combine with expert tensor parallelism = tp (§1.3, etp > 1): the permuted rows
// are all-gathered over tp before the experts and reduce-scattered after them, each of
// T_r·k·etp·h elements (T_r = b·s/tp tokens on a rank): the rank sends (etp-1)·T_r·k·h·B.
// Their backward mirrors them at the same size.
TEST(Moe, DispatchAndCombineCollectivesCarryTheRoutedRows) {
  Scenario s = moe_scenario(2, 1);
  models::Block b = models::make_layer(s, true, true);
  const double rows_bytes = 2.0 * 2048.0 * 2.0 * 512.0 * 2.0;  // b·s·k·h·B: every TP rank's
  int gathers = 0;
  int scatters = 0;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.kind != OpKind::kCollective || op.bytes != rows_bytes) {
      continue;
    }
    EXPECT_EQ(b.graph.tensor(op.in[0]).layout.labels, "bxrh") << op.name;
    gathers += op.coll == graph::CollType::kAllGather ? 1 : 0;
    scatters += op.coll == graph::CollType::kReduceScatter ? 1 : 0;
  }
  // Forward: the gather before fc1 and the scatter after fc2; backward: the re-gather of the
  // saved rows for fc1's weight gradient, the gather of the incoming row gradient and the
  // scatter of the dispatched rows' gradient.
  EXPECT_EQ(gathers, 3);
  EXPECT_EQ(scatters, 2);
}

TEST(Moe, DenseAndMoeLayersFollowFirstDenseLayersAndMoeEvery) {
  Scenario s = moe_scenario(1, 1);
  s.model.layers = 8;
  s.model.moe.first_dense_layers = 2;
  s.model.moe.moe_every = 3;
  StepPrograms p = build_programs(s);
  EXPECT_EQ(p.is_moe, (std::vector<bool>{false, false, true, false, false, true, false, false}));
  graph::ExecGraph g = synthesize(s);
  int routers = 0;
  for (const std::string& name : g.names) {
    routers += name.ends_with(".moe.router") ? 1 : 0;
  }
  EXPECT_EQ(routers, 2);
}

// Rows per expert under balanced routing, and with a capacity factor below 1 (Megatron's
// get_capacity per source rank: ceil(T_r·k·CF/E)).
TEST(Moe, ExpertRowsBalancedAndCappedByCapacity) {
  Scenario s = moe_scenario(2, 1);
  EXPECT_EQ(models::expert_rows(s), 2048 / 2 * 2 / 8 * 2);
  s.model.moe.capacity_factor = 0.5;
  EXPECT_EQ(models::expert_rows(s), 128 * 2);
  s.model.moe.capacity_factor = 1.5;
  EXPECT_EQ(models::expert_rows(s), 256 * 2);
}

TEST(Moe, ValidationNamesTheBrokenKey) {
  Scenario s = moe_scenario(2, 1);
  s.parallel.sp = false;
  auto v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].key, "parallelism.sp");
  s = moe_scenario(1, 1);
  s.model.moe.top_k = 9;
  v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].message, "top_k=9 is more than experts=8");
  s = moe_scenario(1, 1);
  s.model.moe.first_dense_layers = 4;
  v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].key, "model.moe.first_dense_layers");
}

}  // namespace
}  // namespace tessera::synth
