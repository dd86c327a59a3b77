// SPDX-License-Identifier: Apache-2.0
// The optimizer step's kernels (synth/build/optimizer_step.cpp): bytes per parameter of each
// pass against Megatron's mixed-precision optimizer, in order, on the shard the rank updates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "synth/build/synthesize.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

struct Pass {
  std::string name;
  double bytes;
};

// The optimizer-phase kernels of rank 0, in graph order.
std::vector<Pass> optimizer_passes(const Scenario& s) {
  graph::ExecGraph g = synthesize(s);
  const graph::RankGraph& r = g.graph_of(0);
  std::vector<Pass> out;
  for (const graph::Node& n : r.nodes) {
    if (n.op == graph::OpClass::kOptimizer) {
      out.push_back({g.names[n.name], n.bytes});
    }
  }
  return out;
}

// fp16 main gradients (Megatron's default with fp16) are first copied to fp32.
TEST(OptimizerStep, Fp16CopiesUnscalesNormsUpdatesAndZeroes) {
  Scenario s = testing::gpt_scenario(2, 256, 4, 1, 1, 2);  // fp16
  const double p = s.model.parameters();
  std::vector<Pass> v = optimizer_passes(s);
  ASSERT_EQ(v.size(), 5U);
  EXPECT_EQ(v[0].name, "optimizer.copy_grads");
  EXPECT_DOUBLE_EQ(v[0].bytes, 6.0 * p);  // fp16 read, fp32 written
  v.erase(v.begin());
  EXPECT_EQ(v[0].name, "optimizer.unscale_check_inf");
  EXPECT_DOUBLE_EQ(v[0].bytes, 8.0 * p);  // fp32 main gradients read and written
  EXPECT_EQ(v[1].name, "optimizer.grad_norm");
  EXPECT_DOUBLE_EQ(v[1].bytes, 4.0 * p);  // one fp32 read
  EXPECT_EQ(v[2].name, "optimizer.adam");
  EXPECT_DOUBLE_EQ(v[2].bytes, 32.0 * p);
  EXPECT_EQ(v[3].name, "optimizer.zero_grad");
  EXPECT_DOUBLE_EQ(v[3].bytes, 2.0 * p);  // the fp16 main-gradient buffer
}

// fp32 main gradients (--accumulate-allreduce-grads-in-fp32) need no copy; the buffer is fp32.
TEST(OptimizerStep, Fp16WithFp32GradientsHasNoCopy) {
  Scenario s = testing::gpt_scenario_unchecked(2, 256, 4, 1, 1, 2);
  s.training.grad_reduce_in_fp32 = true;
  check_or_throw(s);
  const double p = s.model.parameters();
  std::vector<Pass> v = optimizer_passes(s);
  ASSERT_EQ(v.size(), 4U);
  EXPECT_EQ(v[0].name, "optimizer.unscale_check_inf");
  EXPECT_EQ(v[3].name, "optimizer.zero_grad");
  EXPECT_DOUBLE_EQ(v[3].bytes, 4.0 * p);
}

TEST(OptimizerStep, Bf16HasNoLossScalerAndClipZeroNoNorm) {
  Scenario s = testing::gpt_scenario_unchecked(2, 256, 4, 1, 1, 2);
  s.training.precision = base::DType::kBF16;
  s.training.clip_grad = 0.0;
  check_or_throw(s);
  std::vector<Pass> v = optimizer_passes(s);
  ASSERT_EQ(v.size(), 2U);
  EXPECT_EQ(v[0].name, "optimizer.adam");
  EXPECT_EQ(v[1].name, "optimizer.zero_grad");
}

// The distributed optimizer unscales, norms and updates its 1/dp shard; the gradient buffer
// it zeroes holds all of the rank's parameters.
TEST(OptimizerStep, DistributedOptimizerWorksOnItsShard) {
  Scenario s = testing::gpt_scenario_unchecked(2, 256, 4, 1, 1, 4);
  s.training.distributed_optimizer = true;
  check_or_throw(s);
  const double p = s.model.parameters();
  std::vector<Pass> v = optimizer_passes(s);
  ASSERT_EQ(v.size(), 5U);
  EXPECT_DOUBLE_EQ(v[0].bytes, 6.0 * p / 4.0);
  EXPECT_DOUBLE_EQ(v[1].bytes, 8.0 * p / 4.0);
  EXPECT_DOUBLE_EQ(v[2].bytes, 4.0 * p / 4.0);
  EXPECT_DOUBLE_EQ(v[3].bytes, 32.0 * p / 4.0);
  EXPECT_DOUBLE_EQ(v[4].bytes, 2.0 * p);
}

}  // namespace
}  // namespace tessera::synth
