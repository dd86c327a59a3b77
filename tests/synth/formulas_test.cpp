// SPDX-License-Identifier: Apache-2.0
// The closed forms of docs/formulas.md (Megatron-LM papers), computed through the synthesized
// graph: model FLOPs, activation memory per layer, and communication bytes per rank.
#include <gtest/gtest.h>

#include <cmath>

#include "synth/build/synthesize.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using testing::gpt_scenario;

double korthikanti_flops(const Scenario& s, double coeff, double vocab_div) {
  double B = static_cast<double>(s.training.global_batch);
  double sq = static_cast<double>(s.training.seq_len);
  double l = static_cast<double>(s.model.layers);
  double h = static_cast<double>(s.model.hidden);
  double V = static_cast<double>(s.model.vocab);
  return coeff * B * sq * l * h * h * (1.0 + sq / (6.0 * h) + V / (vocab_div * l * h));
}

TEST(Formulas, ModelFlopsMatchKorthikanti) {
  for (auto [tp, pp, dp] : {std::tuple{1, 1, 1}, std::tuple{8, 8, 2}, std::tuple{4, 2, 1}}) {
    Scenario s = gpt_scenario(16, 2048, 16, tp, pp, dp);
    auto g = synthesize(s);
    double expect = korthikanti_flops(s, 72.0, 12.0);
    EXPECT_NEAR(g.info.model_flops / expect, 1.0, 0.005) << tp << " " << pp << " " << dp;
  }
}

TEST(Formulas, FullRecomputeHardwareFlopsMatchNarayanan) {
  Scenario s = gpt_scenario(16, 2048, 16, 2, 2, 2);
  s.training.recompute = Recompute::kFull;
  auto g = synthesize(s);
  EXPECT_NEAR(g.info.hardware_flops / korthikanti_flops(s, 96.0, 16.0), 1.0, 0.005);
  EXPECT_NEAR(g.info.model_flops / korthikanti_flops(s, 72.0, 12.0), 1.0, 0.005);
}

struct MemCase {
  std::int64_t tp;
  bool sp;
  Recompute recompute;
};

double korthikanti_activation(const Scenario& s, const MemCase& c) {
  double sq = static_cast<double>(s.training.seq_len);
  double b = static_cast<double>(s.training.micro_batch);
  double h = static_cast<double>(s.model.hidden);
  double a = static_cast<double>(s.model.heads);
  double t = static_cast<double>(c.tp);
  double sbh = sq * b * h;
  switch (c.recompute) {
    case Recompute::kFull:
      return 2.0 * sbh / (c.sp ? t : 1.0);
    case Recompute::kSelectiveOp:
      return 0.0;  // not one of Korthikanti's rows (RecomputeOpLevel below)
    case Recompute::kSelective:
      return c.sp ? 34.0 * sbh / t : sbh * (10.0 + 24.0 / t);
    case Recompute::kNone:
      return c.sp ? sbh / t * (34.0 + 5.0 * a * sq / h)
                  : sbh * (10.0 + 24.0 / t + 5.0 * a * sq / (h * t));
  }
  return 0.0;
}

TEST(Formulas, ActivationMemoryPerLayerMatchesKorthikanti) {
  for (MemCase c : {MemCase{1, false, Recompute::kNone}, MemCase{8, false, Recompute::kNone},
                    MemCase{8, true, Recompute::kNone}, MemCase{8, true, Recompute::kSelective},
                    MemCase{8, false, Recompute::kSelective}, MemCase{8, false, Recompute::kFull},
                    MemCase{8, true, Recompute::kFull}, MemCase{4, true, Recompute::kNone}}) {
    Scenario s = gpt_scenario(8, 4096, 32, c.tp, 1, 1);
    s.parallel.sp = c.sp;
    s.training.recompute = c.recompute;
    StepPrograms p = build_programs(s);
    double expect = korthikanti_activation(s, c);
    EXPECT_NEAR(p.layer.saved_bytes / expect, 1.0, 0.02)
        << "tp=" << c.tp << " sp=" << c.sp << " recompute=" << recompute_name(c.recompute)
        << " got " << p.layer.saved_bytes << " expected " << expect;
  }
}

// What a layer's program leaves allocated once its backward is done (allocations minus frees:
// the output handed to the next layer less the input it frees) does not depend on recompute:
// a recomputed twin of the layer's output dies in the layer, or every microbatch would leak
// one activation per layer.
double net_allocation(const parallel::BlockProgram& p) {
  double net = 0.0;
  for (const auto& op : p.ops) {
    net += static_cast<double>(op.node.mem_alloc) - static_cast<double>(op.node.mem_free);
  }
  return net;
}

TEST(Formulas, RecomputeLeavesNothingAllocatedBehindALayer) {
  Scenario s = gpt_scenario(8, 4096, 32, 8, 1, 1);
  s.parallel.sp = true;
  double plain = net_allocation(build_programs(s).layer);
  for (Recompute r : {Recompute::kSelective, Recompute::kFull, Recompute::kSelectiveOp}) {
    s.training.recompute = r;
    EXPECT_DOUBLE_EQ(net_allocation(build_programs(s).layer), plain) << recompute_name(r);
  }
}

// TorchTitan's op-level selective checkpointing on a GPT layer with flash attention (its four
// weight GEMMs QKV, projection, FC1, FC2): QKV and FC1 are kept and the projection and FC2
// rerun, so the backward adds 2 x tokens x (h^2 + 4h^2) / tp GEMM FLOPs; a layer keeps its
// input, the QKV and FC1 outputs and the attention output: s·b·(2h + (6h + 8h + 2h)/tp)
// bytes without SP (fp16, FC1 4h wide), the input whole.
TEST(Formulas, RecomputeOpLevelKeepsEveryOtherGemm) {
  Scenario s = gpt_scenario(8, 4096, 32, 2, 1, 1);
  s.training.attention = AttentionKernel::kFlash;
  s.training.recompute = Recompute::kSelectiveOp;
  StepPrograms p = build_programs(s);
  double tokens = static_cast<double>(s.training.seq_len * s.training.micro_batch);
  double h = static_cast<double>(s.model.hidden);
  EXPECT_NEAR((p.layer.hardware_flops - p.layer.model_flops) / (2.0 * tokens * 5.0 * h * h / 2.0),
              1.0, 0.01);
  double kept = tokens * (2.0 * h + (6.0 * h + 8.0 * h + 2.0 * h) / 2.0);
  EXPECT_NEAR(p.layer.saved_bytes / kept, 1.0, 0.01) << p.layer.saved_bytes << " " << kept;
}

// Sum of collective payload bytes of one layer's program, per phase.
double layer_comm(const parallel::BlockProgram& p, graph::Phase phase, graph::CollType type) {
  double sum = 0.0;
  for (const auto& op : p.ops) {
    if (op.node.kind == graph::NodeKind::kCollective && op.node.phase == phase &&
        op.node.coll == type) {
      sum += op.node.bytes;
    }
  }
  return sum;
}

TEST(Formulas, TensorParallelBytesPerLayer) {
  Scenario s = gpt_scenario(8, 4096, 32, 8, 1, 1);
  double unit = 2.0 * static_cast<double>(s.training.micro_batch * s.training.seq_len *
                                          s.model.hidden);  // 2*b*s*h bytes
  StepPrograms p = build_programs(s);
  using graph::CollType;
  using graph::Phase;
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kForward, CollType::kAllReduce), 2.0 * unit);
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kBackward, CollType::kAllReduce), 2.0 * unit);
  s.parallel.sp = true;
  p = build_programs(s);
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kForward, CollType::kAllReduce), 0.0);
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kForward, CollType::kAllGather), 2.0 * unit);
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kForward, CollType::kReduceScatter), 2.0 * unit);
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kBackward, CollType::kReduceScatter), 2.0 * unit);
  // Backward all-gathers: the formula's two, plus Megatron's re-gather of the two saved
  // sequence shards feeding the weight-gradient GEMMs.
  EXPECT_DOUBLE_EQ(layer_comm(p.layer, Phase::kBackward, CollType::kAllGather), 4.0 * unit);
}

TEST(Formulas, DataAndPipelineParallelBytesPerRank) {
  Scenario s = gpt_scenario(8, 2048, 16, 2, 2, 4);
  auto g = synthesize(s);
  StepPrograms p = build_programs(s);
  for (std::size_t c = 0; c < g.classes.size(); ++c) {
    const auto& rg = g.classes[c];
    double dp_bytes = 0.0;
    double pp_bytes = 0.0;
    for (const auto& n : rg.nodes) {
      if (n.kind == graph::NodeKind::kCollective && n.stream == graph::Stream::kDP) {
        dp_bytes += n.bytes;
      }
      if (n.kind == graph::NodeKind::kSend) {
        pp_bytes += n.bytes;
      }
    }
    double params = (rg.stage == 0 ? p.embed.params : p.head.params) + 4.0 * p.layer.params;
    // fp16 training keeps fp16 main gradients (Megatron's default): 2 bytes a parameter.
    EXPECT_DOUBLE_EQ(dp_bytes, params * 2.0) << "stage " << rg.stage;
    double m = static_cast<double>(s.microbatches());
    double msg = 2.0 * static_cast<double>(s.training.seq_len * s.model.hidden);  // 2*b*s*h
    EXPECT_DOUBLE_EQ(pp_bytes, m * msg) << "stage " << rg.stage;  // one send per microbatch
  }
}

}  // namespace
}  // namespace tessera::synth
