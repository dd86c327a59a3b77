// SPDX-License-Identifier: Apache-2.0
// The fused-attention model against the FlashAttention and cuDNN tables
// (calibration/microbench/attention.yaml); every 4th row of each table is held out of the fit
// (calibration/fit/fit_compute.py attention).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "base/error.h"
#include "hwprofiles/attention_model.h"
#include "hwprofiles/hw_profile.h"
#include "tests/hw/microbench.h"

namespace tessera::hw {
namespace {

using testing::ReproRow;

enum class Pass { kForward, kBackward, kBoth };

struct Point {
  std::string label;
  std::int64_t seq, head_dim;
  bool causal;
  Pass pass;
  double measured;
  bool held_out;  // of the fit: testing::held_out(row index in its table)
};

double predicted(const Profile& p, const Point& pt) {
  AttentionShape s{pt.seq, pt.head_dim, pt.causal};
  double f = attention_fraction(p.attention, AttentionPass::kForward, s);
  double b = attention_fraction(p.attention, AttentionPass::kBackward, s);
  double fraction = pt.pass == Pass::kForward    ? f
                    : pt.pass == Pass::kBackward ? b
                                                 : 3.5 / (1.0 / f + 2.5 / b);
  return p.peak(base::DType::kBF16) * fraction / 1e12;
}

// The flash-attention figures: one table per head dim and masking, `column` per seqlen.
void add_fa(std::vector<Point>& out, const std::string& stem, const char* column, Pass pass,
            std::initializer_list<int> head_dims) {
  for (int hd : head_dims) {
    for (bool causal : {false, true}) {
      std::string id = fmt::format("{}-hd{}-{}", stem, hd, causal ? "causal" : "noncausal");
      testing::MicrobenchTable t = testing::load_microbench("attention.yaml", id);
      for (std::size_t i = 0; i < t.rows.size(); ++i) {
        if (t.has(i, column)) {
          auto seq = static_cast<std::int64_t>(t.num(i, "seqlen"));
          out.push_back({fmt::format("{} s={}", id, seq), seq, hd, causal, pass, t.num(i, column),
                         testing::held_out(i)});
        }
      }
    }
  }
}

double reproduce(const std::string& profile, const std::vector<Point>& points) {
  Profile p = load_profile(profile);
  std::vector<ReproRow> rows;
  for (const Point& pt : points) {
    rows.push_back({pt.label, pt.measured, predicted(p, pt), pt.held_out});
  }
  return testing::report("fused attention on " + profile, "TFLOP/s", rows).mean_held_out;
}

// FA3 forward on H100 and cuDNN backward on H200 (same SMs and clocks).
TEST(AttentionRepro, H100Fa3ForwardCudnnBackward) {
  std::vector<Point> points;
  add_fa(points, "fa3-h100-fwd-fp16", "flashattn3", Pass::kForward, {64, 128, 256});
  testing::MicrobenchTable t =
      testing::load_microbench("attention.yaml", "cudnn-sdpa-h200-llama31-gqa");
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.str(i, "dtype") != "bfloat16") {
      continue;
    }
    auto seq = static_cast<std::int64_t>(t.num(i, "seqlen"));
    bool causal = t.str(i, "mask") == "causal";
    points.push_back({fmt::format("cudnn-h200 bwd {} s={}", t.str(i, "mask"), seq), seq,
                      static_cast<std::int64_t>(t.num(i, "head_dim")), causal, Pass::kBackward,
                      t.num(i, "bwd_tflops"), testing::held_out(i)});
  }
  EXPECT_LE(reproduce("h100-sxm", points), 0.10);
}

// cuDNN SDPA rows with forward and backward columns (`fwd`, `bwd`), head dim 128.
void add_cudnn(std::vector<Point>& out, const std::string& id, const char* dtype_col,
               const char* dtype, const char* seq_col, bool causal_only) {
  testing::MicrobenchTable t = testing::load_microbench("attention.yaml", id);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.str(i, dtype_col) != dtype) {
      continue;
    }
    auto seq = static_cast<std::int64_t>(t.num(i, seq_col));
    bool causal = causal_only || t.str(i, "mask") == "causal";
    for (auto [pass, col] :
         {std::pair{Pass::kForward, "fwd_tflops"}, std::pair{Pass::kBackward, "bwd_tflops"}}) {
      out.push_back({fmt::format("{} {} {} s={}", id, pass == Pass::kForward ? "fwd" : "bwd",
                                 causal ? "causal" : "noncausal", seq),
                     seq, 128, causal, pass, t.num(i, col), testing::held_out(i)});
    }
  }
}

TEST(AttentionRepro, H200Cudnn) {
  std::vector<Point> points;
  add_cudnn(points, "cudnn-sdpa-h200-llama31-gqa", "dtype", "bfloat16", "seqlen", false);
  testing::MicrobenchTable t = testing::load_microbench("attention.yaml", "cudnn-sdpa-hopper-2024");
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    auto seq = static_cast<std::int64_t>(t.num(i, "seqlen"));
    bool causal = t.rows[i][t.column("causal")].as<bool>();
    for (auto [pass, col] : {std::pair{Pass::kForward, "cudnn_bf16_fwd"},
                             std::pair{Pass::kBackward, "cudnn_bf16_bwd"}}) {
      points.push_back({fmt::format("cudnn-hopper-2024 {} s={}", col, seq), seq, 128, causal, pass,
                        t.num(i, col), testing::held_out(i)});
    }
  }
  EXPECT_LE(reproduce("h200-sxm", points), 0.10);
}

// 15%, not 10%: the B200 table ran at free clocks (its README recommends locking them), is
// causal only, and falls past 32k (1515 -> 1422 TFLOP/s forward), which no ramp follows.
TEST(AttentionRepro, B200Cudnn) {
  std::vector<Point> points;
  add_cudnn(points, "cudnn-sdpa-b200-fp8-vs-bf16", "dtype", "bf16", "seqlen", true);
  EXPECT_LE(reproduce("b200", points), 0.15);
}

TEST(AttentionRepro, Gb200Cudnn) {
  testing::MicrobenchTable t =
      testing::load_microbench("attention.yaml", "cudnn-sdpa-gb200-llama31-gqa");
  std::vector<Point> points;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.str(i, "dtype") != "bfloat16") {
      continue;
    }
    auto seq = static_cast<std::int64_t>(t.num(i, "seqlen"));
    bool causal = t.str(i, "mask") == "causal";
    Pass pass = t.str(i, "pass") == "fwd" ? Pass::kForward : Pass::kBackward;
    points.push_back(
        {fmt::format("cudnn-gb200 {} {} s={}", t.str(i, "pass"), t.str(i, "mask"), seq), seq, 128,
         causal, pass, t.num(i, "tflops"), testing::held_out(i)});
  }
  EXPECT_LE(reproduce("gb200", points), 0.10);
}

// FA2 forward + backward on A100.
TEST(AttentionRepro, A100Fa2ForwardBackward) {
  std::vector<Point> points;
  add_fa(points, "fa2-a100-fwdbwd", "flashattn2", Pass::kBoth, {64, 128});
  EXPECT_LE(reproduce("a100-sxm-80gb", points), 0.10);
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
