// SPDX-License-Identifier: Apache-2.0
// FP8 training end to end (docs/fp8.md): on Hopper (h100-sxm, h200-sxm) and Blackwell (b200) a
// model whose step is dominated by large GEMMs runs faster than in bf16, and only Hopper
// carries the transposed FP8 copies.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

// Two Llama-like layers of hidden 8192 (ffn 28672, GQA 64/8) over 4096 tokens at TP8: the
// linear GEMMs are large and dominate the step.
synth::Scenario big_gemm(synth::Fp8Recipe recipe, const std::string& hardware) {
  synth::Scenario s = tiny_like(8, 1, 1);
  s.model = *synth::model_preset("llama3-70b");
  s.model.layers = 2;
  s.training.seq_len = 4096;
  s.training.micro_batch = 1;
  s.training.global_batch = 2;
  s.parallel.sp = true;
  s.training.fp8 = recipe;
  s.cluster.hardware = hardware;
  return s;
}

int transposes(const graph::ExecGraph& g) {
  int n = 0;
  for (const graph::Node& node : g.graph_of(0).nodes) {
    n += g.names[node.name].find("fp8.cast_transpose") != std::string::npos ? 1 : 0;
  }
  return n;
}

TEST(Fp8Run, ShorterStepThanBf16OnHopperAndBlackwell) {
  fmt::print("{:<10} {:<11} {:>12} {:>12} {:>8} {:>11}\n", "hardware", "recipe", "bf16 step",
             "fp8 step", "speedup", "transposes");
  for (const char* hw : {"h100-sxm", "h200-sxm", "b200"}) {
    const Outcome bf16 = run(big_gemm(synth::Fp8Recipe::kNone, hw), true);
    for (auto recipe : {synth::Fp8Recipe::kDelayed, synth::Fp8Recipe::kTensorwise,
                        synth::Fp8Recipe::kBlockwise}) {
      SCOPED_TRACE(std::string(hw) + " " + std::string(synth::fp8_recipe_name(recipe)));
      const Outcome fp8 = run(big_gemm(recipe, hw), true);
      const int t = transposes(fp8.graph);
      fmt::print("{:<10} {:<11} {:>10.3f}ms {:>10.3f}ms {:>7.2f}x {:>11}\n", hw,
                 synth::fp8_recipe_name(recipe), bf16.stats.step_time_s * 1e3,
                 fp8.stats.step_time_s * 1e3, bf16.stats.step_time_s / fp8.stats.step_time_s, t);
      EXPECT_LT(fp8.stats.step_time_s, bf16.stats.step_time_s);
      const bool hopper = std::string(hw) != "b200";
      if (hopper || recipe == synth::Fp8Recipe::kBlockwise) {
        EXPECT_GT(t, 0);
      } else {
        EXPECT_EQ(t, 0);  // Blackwell reads FP8 operands in either layout
      }
      EXPECT_EQ(transposes(bf16.graph), 0);
    }
  }
}

}  // namespace
}  // namespace tessera::integration
