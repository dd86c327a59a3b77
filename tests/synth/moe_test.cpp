// SPDX-License-Identifier: Apache-2.0
// Mixture-of-experts layers (docs/moe.md) against the closed forms of
// formulas_moe_cp_zero.md §1 (Megatron-Core), computed from the synthesized tensor graph:
// FLOPs per token, parameters per rank, the dispatch and combine collectives' bytes, and
// which layers are MoE layers.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/scenario/model_presets.h"
#include "tests/synth/moe_fixtures.h"

namespace tessera::synth {
namespace {

using stg::OpKind;

using testing::moe_scenario;

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
// and the router h·E replace the dense MLP's g·h·f. A rank holds E/ep experts, each /etp; the
// shared experts and the dense MLP are /tp; the router is replicated.
TEST(Moe, ParametersPerRankMatchTheClosedForm) {
  struct Case {
    std::int64_t tp, dp, ep, etp;
  };
  for (Case c : {Case{1, 1, 1, 1}, Case{2, 1, 1, 1}, Case{2, 1, 1, 2}, Case{2, 2, 4, 1},
                 Case{2, 4, 2, 2}, Case{1, 8, 8, 1}}) {
    Scenario s = moe_scenario(c.tp, c.dp, c.ep, c.etp);
    const double dense = models::make_layer(s).params;
    const models::Block layer = models::make_layer(s, true, true);
    const double h = 512.0;
    const double t = static_cast<double>(c.tp);
    const double experts = 3.0 * h * 768.0 * 8.0 / static_cast<double>(c.ep * c.etp);
    const double expect = h * 8.0 + experts + 3.0 * h * 1024.0 / t - 3.0 * h * 1536.0 / t;
    EXPECT_DOUBLE_EQ(layer.params - dense, expect) << c.tp << c.dp << c.ep << c.etp;
    EXPECT_DOUBLE_EQ(layer.expert_params, experts) << c.tp << c.dp << c.ep << c.etp;
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

// Dispatch and combine with expert tensor parallelism (§1.3, etp > 1): the permuted rows are
// all-gathered over etp before the experts and reduce-scattered after them, each of
// T_r·k·etp·h elements (T_r = b·s/tp tokens on a rank): the rank sends (etp-1)·T_r·k·h·B.
// Their backward mirrors them at the same size.
TEST(Moe, ExpertTensorParallelGathersAndScattersTheRoutedRows) {
  Scenario s = moe_scenario(2, 1, 1, 2);
  models::Block b = models::make_layer(s, true, true);
  const double rows_bytes = 2.0 * 2048.0 * 2.0 * 512.0 * 2.0;  // b·s·k·h·B: every TP rank's
  int gathers = 0;
  int scatters = 0;
  for (const stg::Op& op : b.graph.ops()) {
    if (op.kind != OpKind::kCollective || op.bytes != rows_bytes) {
      continue;
    }
    EXPECT_EQ(b.graph.tensor(op.in[0]).layout.labels, "nxirh") << op.name;
    EXPECT_EQ(op.axis, static_cast<std::uint8_t>(Axis::kETP)) << op.name;
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
  std::vector<bool> is_moe;
  for (std::int64_t l = 0; l < 8; ++l) {
    is_moe.push_back(p.kind_of(l).moe);
  }
  EXPECT_EQ(is_moe, (std::vector<bool>{false, false, true, false, false, true, false, false}));
  graph::ExecGraph g = synthesize(s);
  int routers = 0;
  for (const std::string& name : g.names) {
    routers += name.ends_with(".moe.router") ? 1 : 0;
  }
  EXPECT_EQ(routers, 2);
}

// Rows per expert under balanced routing (T_r·k/E, T_r = b·s/tp, times ep for the rows of the
// EP group), and with a capacity factor below 1 (Megatron's get_capacity per source rank:
// ceil(T_r·k·CF/E)).
TEST(Moe, ExpertRowsBalancedAndCappedByCapacity) {
  Scenario s = moe_scenario(2, 1);
  EXPECT_EQ(models::expert_rows(s), 2 * 2048 / 2 * 2 / 8);
  s.model.moe.capacity_factor = 0.5;
  EXPECT_EQ(models::expert_rows(s), 256);
  s.model.moe.capacity_factor = 1.5;
  EXPECT_EQ(models::expert_rows(s), 512);
  s = moe_scenario(2, 2, 4);
  EXPECT_EQ(models::expert_rows(s), 512 * 4);
}

// The presets' parameter counts are the released checkpoints': Mixtral-8x7B's 46,702,792,704
// exactly, Qwen3-30B-A3B's 30,532,122,624 less its per-head QK norms (48 layers x 2 x 128).
TEST(Moe, PresetParametersAreTheReleasedModels) {
  EXPECT_DOUBLE_EQ(model_preset("mixtral-8x7b")->parameters(), 46702792704.0);
  EXPECT_DOUBLE_EQ(model_preset("qwen3-30b-a3b")->parameters(), 30532122624.0 - 48.0 * 256.0);
  EXPECT_EQ(model_preset("qwen3-30b-a3b")->head_dim(), 128);
}

// GPT-OSS's model card gives 116.83B parameters for gpt-oss-120b and 20.91B for gpt-oss-20b;
// the presets leave out per layer the attention biases (4096 + 2 x 512 + 2880), each expert's
// (2 x 2880 + 2880), the router's (one per expert) and the 64 attention sinks.
TEST(Moe, GptOssPresetsAreTheReleasedModelsLessTheirBiases) {
  for (auto [name, layers, experts, released] : {std::tuple{"gpt-oss-120b", 36.0, 128.0, 116.83e9},
                                                 std::tuple{"gpt-oss-20b", 24.0, 32.0, 20.91e9}}) {
    const double biases = layers * (8000.0 + experts * 8640.0 + experts + 64.0);
    EXPECT_NEAR(model_preset(name)->parameters() + biases, released, 0.005e9) << name;
    EXPECT_EQ(model_preset(name)->window_of_layer(0), 128) << name;
    EXPECT_EQ(model_preset(name)->window_of_layer(1), 0) << name;
  }
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
