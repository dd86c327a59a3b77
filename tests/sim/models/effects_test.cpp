// SPDX-License-Identifier: Apache-2.0
#include "sim/models/effects.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "sim/models/compute/roofline_compute_model.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::models {
namespace {

TEST(Effects, AllOnByDefaultAndOffWhenDisabled) {
  Effects e;
  EXPECT_TRUE(e.on("kernel-launch"));
  e.disable("kernel-launch");
  e.disable("kernel-launch");  // twice is once
  EXPECT_FALSE(e.on("kernel-launch"));
  EXPECT_TRUE(e.on("gemm-quantization"));
  EXPECT_EQ(e.disabled(), (std::vector<std::string>{"kernel-launch"}));
}

TEST(Effects, UnknownNamesAreInputErrorsWithASuggestion) {
  Effects e;
  try {
    e.disable("kernel-lanch");
    FAIL() << "an unknown effect was accepted";
  } catch (const base::InputError& err) {
    EXPECT_NE(std::string(err.what()).find("did you mean 'kernel-launch'"), std::string::npos)
        << err.what();
  }
  EXPECT_THROW((void)e.on("no-such-effect"), base::InternalError);
}

TEST(Effects, EveryKnownEffectIsNamedAndDescribed) {
  for (const EffectInfo& info : known_effects()) {
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.what.empty()) << info.name;
    EXPECT_TRUE(Effects{}.on(info.name));
  }
}

graph::Node gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  graph::Node node;
  node.op = graph::OpClass::kGemm;
  node.flops = 2.0 * static_cast<double>(m * n * k);
  node.gemm = {m, n, k, 1};
  return node;
}

TEST(Effects, RooflineDropsTheLaunchCostAndTheGemmQuantization) {
  hw::Profile p = simtest::test_profile();
  p.launch.stream = 7000;
  graph::Node small = gemm(100, 100, 100);  // a partial tile: quantization costs a lot
  Effects no_launch;
  no_launch.disable("kernel-launch");
  EXPECT_EQ(RooflineComputeModel(p).duration(small) - 7000,
            RooflineComputeModel(p, no_launch).duration(small));
  Effects flat;
  flat.disable("gemm-quantization");
  EXPECT_EQ(RooflineComputeModel(p, flat).duration(small),
            7000 + base::from_seconds(small.flops / (1e15 * p.gemm.max_fraction)));
  EXPECT_LT(RooflineComputeModel(p, flat).duration(small), RooflineComputeModel(p).duration(small));
}

Effects without(std::string_view name) {
  Effects e;
  e.disable(name);
  return e;
}

// Each new effect switched off gives back the model before it: the main tile without
// split-K, no GEMM latency, one flat attention fraction, the HBM plateau for every size, and
// no host thread on eager launches.
TEST(Effects, EachComputeEffectOffRestoresTheSimplerModel) {
  hw::Profile p = simtest::test_profile();
  p.gemm.tiles = {hw::GemmTile{128, 256}, hw::GemmTile{64, 64}};
  p.gemm.latency = 5000000;
  p.hbm_half_bytes = 8e6;
  p.launch = {.stream = 2000000, .graph = 1000000, .host = 0};
  graph::Node skinny = gemm(64, 64, 8192);
  double main_tile = hw::gemm_kernel(p.gemm, {64, 64, 8192, 1}, 1e15 * p.gemm.max_fraction, 2e12,
                                     {.kernel_choice = false})
                         .seconds;
  EXPECT_EQ(RooflineComputeModel(p, without("gemm-kernel-choice")).duration(skinny),
            2000000 + 5000000 + base::from_seconds(main_tile));
  EXPECT_LT(RooflineComputeModel(p).duration(skinny),
            RooflineComputeModel(p, without("gemm-kernel-choice")).duration(skinny));
  EXPECT_EQ(RooflineComputeModel(p).duration(skinny) - 5000000,
            RooflineComputeModel(p, without("gemm-latency")).duration(skinny));

  graph::Node attn;
  attn.op = graph::OpClass::kAttention;
  attn.flops = 1e12;
  attn.gemm = {512, 512, 64, 8};
  attn.causal = true;
  p.attention.seq_half_forward = 512;
  EXPECT_EQ(RooflineComputeModel(p, without("attention-tables")).duration(attn),
            2000000 + base::from_seconds(1e12 / (1e15 * p.attention_fraction)));
  EXPECT_GT(RooflineComputeModel(p).duration(attn),
            RooflineComputeModel(p, without("attention-tables")).duration(attn));

  graph::Node norm;
  norm.op = graph::OpClass::kNorm;
  norm.bytes = 8e6;
  EXPECT_EQ(RooflineComputeModel(p, without("memory-bound-ramp")).duration(norm),
            2000000 + base::from_seconds(4e-6));
  EXPECT_EQ(RooflineComputeModel(p).duration(norm), 2000000 + base::from_seconds(8e-6));

  p.launch.host = 7000000;
  EXPECT_EQ(RooflineComputeModel(p).host_cost(norm), 7000000);
  EXPECT_TRUE(RooflineComputeModel(p).host_bound());
  EXPECT_EQ(RooflineComputeModel(p, without("host-launch")).host_cost(norm), 0);
  EXPECT_FALSE(RooflineComputeModel(p, without("host-launch")).host_bound());
}

}  // namespace
}  // namespace tessera::models
