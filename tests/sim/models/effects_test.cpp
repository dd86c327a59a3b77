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
  p.kernel_launch = 7000;
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

}  // namespace
}  // namespace tessera::models
