// SPDX-License-Identifier: Apache-2.0
// The attention and memory-bound kernel models in closed form (hwprofiles/attention_model.h,
// memory_model.h). Their fit to the microbenchmark tables is checked in
// tests/experiments/microbench_repro_test.cpp.
#include <gtest/gtest.h>

#include "base/error.h"
#include "hwprofiles/attention_model.h"
#include "hwprofiles/hw_profile.h"
#include "hwprofiles/memory_model.h"

namespace tessera::hw {
namespace {

TEST(MemoryModel, RampsToThePlateau) {
  Profile p;
  p.hbm_bandwidth = 2e12;
  p.hbm_efficiency = 0.5;
  p.hbm_half_bytes = 1e6;
  EXPECT_DOUBLE_EQ(memory_rate(p, 1e6), 0.5e12);  // half of the 1e12 plateau at half_size
  EXPECT_DOUBLE_EQ(memory_rate(p, 3e6), 0.75e12);
  EXPECT_DOUBLE_EQ(memory_rate(p, 1e6, false), 1e12);
  p.hbm_half_bytes = 0.0;
  EXPECT_DOUBLE_EQ(memory_rate(p, 1.0), 1e12);
}

TEST(AttentionModel, ClosedForm) {
  AttentionModel a;
  a.forward = {{64, 0.4}, {256, 0.8}};
  a.backward = {{128, 0.5}};
  a.seq_half_forward = 1000;
  a.seq_half_backward = 500;
  a.causal_seq_factor = 2.0;
  // log2 interpolation: hd 128 is halfway between 64 and 256; ends held outside.
  EXPECT_DOUBLE_EQ(attention_plateau(a, AttentionPass::kForward, 128), 0.6);
  EXPECT_DOUBLE_EQ(attention_plateau(a, AttentionPass::kForward, 32), 0.4);
  EXPECT_DOUBLE_EQ(attention_plateau(a, AttentionPass::kForward, 512), 0.8);
  EXPECT_DOUBLE_EQ(attention_fraction(a, AttentionPass::kForward, {1000, 128, false}), 0.3);
  // Causal ramps as if the sequence were half as long: 1000/2 / (500 + 500).
  EXPECT_DOUBLE_EQ(attention_fraction(a, AttentionPass::kBackward, {1000, 128, true}), 0.25);
  EXPECT_DOUBLE_EQ(attention_fraction_fwd_bwd(a), 3.5 / (1.0 / 0.6 + 2.5 / 0.5));
  EXPECT_THROW((void)attention_fraction(a, AttentionPass::kForward, {0, 128, false}),
               base::InternalError);
}

}  // namespace
}  // namespace tessera::hw
