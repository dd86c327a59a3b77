// SPDX-License-Identifier: Apache-2.0
#include "sim/models/compute/roofline_compute_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hwprofiles/gemm_model.h"
#include "sim/models/network/network_model.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::models {
namespace {

using base::from_seconds;

graph::Node op(graph::OpClass c, double flops, double bytes) {
  graph::Node n;
  n.op = c;
  n.flops = flops;
  n.bytes = bytes;
  return n;
}

TEST(RooflineComputeModel, FixedDurationWins) {
  hw::Profile p = simtest::test_profile();
  p.launch.stream = 5000;
  graph::Node n = op(graph::OpClass::kGemm, 1e12, 1e9);
  n.fixed_duration = 1234;
  EXPECT_EQ(RooflineComputeModel(p).duration(n), 1234);
}

TEST(RooflineComputeModel, MemoryBoundOpTakesBytesOverBandwidth) {
  hw::Profile p = simtest::test_profile();
  p.hbm_efficiency = 0.5;
  p.launch.stream = 3000;
  RooflineComputeModel m(p);
  // 4 GB at 2 TB/s * 0.5 = 4 ms; 1 GFLOP at 50 TFLOP/s vector = 20 us.
  EXPECT_EQ(m.duration(op(graph::OpClass::kElementwise, 1e9, 4e9)), 3000 + from_seconds(4e-3));
  // Math-bound on the vector units when the bytes are few.
  EXPECT_EQ(m.duration(op(graph::OpClass::kNorm, 1e12, 1e3)), 3000 + from_seconds(1e12 / 50e12));
}

TEST(RooflineComputeModel, GemmUsesTheEfficiencyModel) {
  hw::Profile p = simtest::test_profile();
  p.launch.stream = 1000;
  graph::Node n = op(graph::OpClass::kGemm, 2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 2);
  n.gemm = {4096, 4096, 4096, 1};
  p.gemm.latency = 4000;
  double math =
      hw::gemm_kernel(p.gemm, {4096, 4096, 4096, 1}, 1e15 * p.gemm.max_fraction, 2e12).seconds;
  ASSERT_GT(math, n.bytes / 2e12);  // compute-bound
  EXPECT_EQ(RooflineComputeModel(p).duration(n), 1000 + 4000 + from_seconds(math));
  // A skinny GEMM is bound by its A, B and C bytes at the HBM plateau.
  graph::Node skinny = op(graph::OpClass::kGemm, 2.0 * 8 * 8192 * 8192, 2.0 * 8192 * 8192);
  skinny.gemm = {8, 8192, 8192, 1};
  EXPECT_EQ(RooflineComputeModel(p).duration(skinny),
            1000 + 4000 + from_seconds(skinny.bytes / 2e12));
}

TEST(RooflineComputeModel, EagerKernelsCostTheHostGraphsPayTheFloor) {
  hw::Profile p = simtest::test_profile();
  p.launch = {
      .stream = from_seconds(2.5e-6), .graph = from_seconds(1.3e-6), .host = from_seconds(7.5e-6)};
  graph::Node tiny = op(graph::OpClass::kElementwise, 0.0, 2e6);  // 1 us at 2 TB/s
  graph::Node big = op(graph::OpClass::kElementwise, 0.0, 2e9);   // 1 ms
  RooflineComputeModel eager(p);
  // The device time plus its floor; the host's cost is its thread's (sim/exec/host_thread.h).
  EXPECT_EQ(eager.duration(tiny), from_seconds(2.5e-6) + from_seconds(1e-6));
  EXPECT_EQ(eager.duration(big), from_seconds(2.5e-6) + from_seconds(1e-3));
  EXPECT_TRUE(eager.host_bound());
  EXPECT_EQ(eager.host_cost(tiny), from_seconds(7.5e-6));
  graph::Node measured = tiny;
  measured.fixed_duration = 5;
  EXPECT_EQ(eager.host_cost(measured), 0);  // an imported node's time already holds it
  graph::Node coll = tiny;
  coll.kind = graph::NodeKind::kCollective;
  EXPECT_EQ(eager.host_cost(coll), 0);  // the collective model's launch term
  RooflineComputeModel graphs(p, {}, KernelChoice{.cuda_graphs = true});
  EXPECT_EQ(graphs.duration(tiny), from_seconds(1.3e-6) + from_seconds(1e-6));
  EXPECT_EQ(graphs.duration(big), from_seconds(1.3e-6) + from_seconds(1e-3));
  EXPECT_FALSE(graphs.host_bound());
  EXPECT_EQ(graphs.host_cost(tiny), 0);
}

TEST(RooflineComputeModel, AttentionByPassHeadDimSequenceAndMask) {
  hw::Profile p = simtest::test_profile();
  p.attention.forward = {{128, 0.8}};
  p.attention.backward = {{128, 0.5}};
  p.attention.seq_half_forward = 1024;
  p.attention.seq_half_backward = 1024;
  p.attention.causal_seq_factor = 2.0;
  graph::Node attn = op(graph::OpClass::kAttention, 1e12, 0.0);
  attn.gemm = {1024, 1024, 128, 32};  // q len, kv len, head dim, batch x heads
  RooflineComputeModel m(p);
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (1e15 * 0.8 * 0.5)));
  attn.phase = graph::Phase::kBackward;
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (1e15 * 0.5 * 0.5)));
  attn.causal = true;  // ramps as 512 / (512 + 1024)
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (1e15 * 0.5 / 3.0)));
  attn.phase = graph::Phase::kRecompute;  // a recomputed forward
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (1e15 * 0.8 / 3.0)));
}

TEST(RooflineComputeModel, SmallMemoryBoundKernelsReachLessOfThePlateau) {
  hw::Profile p = simtest::test_profile();
  p.hbm_half_bytes = 4e6;
  RooflineComputeModel m(p);
  // 4 MB at half the 2 TB/s plateau: 4 us; 396 MB at 0.99 of it: 200 us.
  EXPECT_EQ(m.duration(op(graph::OpClass::kNorm, 0.0, 4e6)), from_seconds(4e-6));
  EXPECT_EQ(m.duration(op(graph::OpClass::kNorm, 0.0, 396e6)), from_seconds(200e-6));
}

TEST(RooflineComputeModel, AttentionAndDtypeFallbacks) {
  hw::Profile p = simtest::test_profile();
  RooflineComputeModel m(p);
  graph::Node attn = op(graph::OpClass::kAttention, 1e12, 0.0);
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (1e15 * p.attention_fraction)));
  attn.dtype = base::DType::kFP8;
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (2e15 * p.attention_fraction)));
  // fp32 has no matrix peak in this profile and no fp32 peak to fall back to: vector units.
  attn.dtype = base::DType::kFP32;
  EXPECT_EQ(m.duration(attn), from_seconds(1e12 / (50e12 * p.attention_fraction)));
  p.peak_flops[2] = 60e12;
  EXPECT_EQ(RooflineComputeModel(p).duration(attn),
            from_seconds(1e12 / (60e12 * p.attention_fraction)));
}

// FlashAttention-2 kernels use the profile's attention.fa2 tables where it has them; the math
// rates sustain under_load.math of the microbenchmarked ones, and attention under_load.attention
// of that besides, GEMMs not.
TEST(RooflineComputeModel, Fa2TablesAndMathUnderLoad) {
  hw::Profile p = simtest::test_profile();
  graph::Node attn = op(graph::OpClass::kAttention, 1e12, 0.0);
  attn.gemm = {4096, 4096, 128, 8};
  const base::SimTime best = RooflineComputeModel(p).duration(attn);
  const KernelChoice fa2{.attention_fa2 = true};
  EXPECT_EQ(RooflineComputeModel(p, {}, fa2).duration(attn), best);  // no fa2 tables: the same
  p.attention_fa2 = p.attention;
  for (auto& pt : p.attention_fa2->forward) {
    pt.fraction /= 2.0;
  }
  EXPECT_NEAR(static_cast<double>(RooflineComputeModel(p, {}, fa2).duration(attn)),
              2.0 * static_cast<double>(best), 1e-6 * static_cast<double>(best));
  p.under_load.math = 0.5;
  EXPECT_NEAR(static_cast<double>(RooflineComputeModel(p).duration(attn)),
              2.0 * static_cast<double>(best), 1e-6 * static_cast<double>(best));
  graph::Node gemm = op(graph::OpClass::kGemm, 1e12, 0.0);
  const base::SimTime gemm_time = RooflineComputeModel(p).duration(gemm);
  p.under_load.attention = 0.8;
  EXPECT_NEAR(static_cast<double>(RooflineComputeModel(p).duration(attn)),
              2.0 / 0.8 * static_cast<double>(best), 1e-6 * static_cast<double>(best));
  EXPECT_EQ(RooflineComputeModel(p).duration(gemm), gemm_time);
}

// FP8 GEMMs of a step with MX block scales (fp8_recipe: mxfp8) run at gemm.mxfp8_rate of the
// per-tensor FP8 rate, their ceiling too; per-tensor FP8 and BF16 GEMMs keep theirs.
TEST(RooflineComputeModel, MxBlockScaledFp8GemmsRunAtTheirRate) {
  hw::Profile p = simtest::test_profile();
  p.gemm.mxfp8_rate = 0.8;
  const KernelChoice mx{.fp8_block_scaled = true};
  graph::Node fp8 = op(graph::OpClass::kGemm, 1e12, 0.0);
  fp8.dtype = base::DType::kFP8;
  const double rate = 2e15 * p.gemm.fraction(base::DType::kFP8);
  EXPECT_EQ(RooflineComputeModel(p).duration(fp8), from_seconds(1e12 / rate));
  EXPECT_EQ(RooflineComputeModel(p, {}, mx).duration(fp8), from_seconds(1e12 / (rate * 0.8)));
  graph::Node bf16 = op(graph::OpClass::kGemm, 1e12, 0.0);
  EXPECT_EQ(RooflineComputeModel(p, {}, mx).duration(bf16), RooflineComputeModel(p).duration(bf16));
  // A large shaped GEMM at the sustained ceiling: the ceiling scales as well.
  p.gemm.sustained_fp8 = 0.1e15;
  fp8.gemm = {8192, 8192, 8192, 1};
  fp8.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  EXPECT_EQ(RooflineComputeModel(p).duration(fp8), from_seconds(fp8.flops / 0.1e15));
  EXPECT_EQ(RooflineComputeModel(p, {}, mx).duration(fp8), from_seconds(fp8.flops / 0.08e15));
}

// Under a power cap a GEMM (activity 1) slows by the cap's clock factor; an attention kernel
// slows by the factor at its activity: its rate at full clocks over the GEMM ceiling.
TEST(RooflineComputeModel, PowerCapSlowsAttentionByItsActivity) {
  hw::Profile p = simtest::test_profile();
  p.gemm.sustained_bf16 = 0.8e15;
  p.power = {.tdp = 700.0, .idle = 70.0, .exponent = 0.9, .limit = 500.0};
  graph::Node attn = op(graph::OpClass::kAttention, 1e12, 0.0);
  const double activity = 1e15 * p.attention_fraction / 0.8e15;
  const double clock = std::min(1.0, std::pow(430.0 / (630.0 * activity), 0.9));
  EXPECT_EQ(RooflineComputeModel(p).duration(attn),
            from_seconds(1e12 / (1e15 * p.attention_fraction * clock)));
  p.attention_fraction = 0.3;  // activity 0.375: under the cap at full clocks
  EXPECT_EQ(RooflineComputeModel(p).duration(attn), from_seconds(1e12 / (1e15 * 0.3)));
  graph::Node gemm = op(graph::OpClass::kGemm, 1e12, 0.0);
  p.launch.stream = 0;
  EXPECT_EQ(
      RooflineComputeModel(p).duration(gemm),
      from_seconds(1e12 / (1e15 * p.gemm.fraction(base::DType::kBF16) * p.power.clock_scale())));
}

TEST(ComputeModelRegistry, MakesTheRegisteredModelAndNamesTheKnownOnes) {
  hw::Profile p = simtest::test_profile();
  EXPECT_EQ(builtin_compute_models().names(), (std::vector<std::string_view>{"roofline"}));
  graph::Node n = op(graph::OpClass::kElementwise, 0.0, 3e9);
  EXPECT_EQ(make_compute_model("roofline", p)->duration(n), RooflineComputeModel(p).duration(n));
  try {
    (void)make_compute_model("rooflin", p);
    FAIL() << "an unknown compute model was accepted";
  } catch (const base::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown compute model 'rooflin'; known: roofline"),
              std::string::npos)
        << e.what();
  }
}

TEST(NetworkModelRegistry, NamesTheKnownModels) {
  EXPECT_EQ(builtin_network_models().names(), (std::vector<std::string_view>{"max-min"}));
  kernel::Scheduler s;
  PathTable t(std::vector<double>{1.0});
  t.finalize();
  EXPECT_NE(make_network_model("max-min", s, t), nullptr);
  EXPECT_THROW((void)make_network_model("maxmin", s, t), base::InputError);
}

}  // namespace
}  // namespace tessera::models
