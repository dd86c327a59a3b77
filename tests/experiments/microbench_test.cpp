// SPDX-License-Identifier: Apache-2.0
// `tessera calibrate` on microbenchmarks: tables "measured" by the models themselves on a
// profile with known changes give the changes back; and a fits file's mistakes are refused at
// their place.
#include "experiments/calibrate/microbench.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::experiments::calibrate {
namespace {

using testing::error_of;
using testing::TempDir;

// One table row per shape: its columns' values and the measured rate `truth` gives.
std::string memory_table(const hw::Profile& truth) {
  std::string rows;
  for (int n = 256; n <= 131072; n *= 2) {
    Measurement m;
    m.model = KernelModel::kMemory;
    m.bytes = 4.0 * 4096 * n;
    rows += fmt::format("      - [{}, {:.17g}]\n", n, predict(truth, m));
  }
  return "- id: norms\n  table:\n    columns: [N, gbps]\n    rows:\n" + rows;
}

std::string gemm_table(const hw::Profile& truth) {
  std::string rows;
  for (int m = 256; m <= 4096; m *= 2) {
    for (int n : {256, 1024, 4096}) {
      for (int k : {128, 512, 2048, 8192}) {
        Measurement g;
        g.gemm = {m, n, k, 1};
        rows += fmt::format("      - [{}, {}, {}, {:.17g}]\n", m, n, k, predict(truth, g));
      }
    }
  }
  return "- id: grid\n  table:\n    columns: [m, n, k, tflops]\n    rows:\n" + rows;
}

std::string attention_table(const hw::Profile& truth) {
  std::string rows;
  for (int seq = 256; seq <= 32768; seq *= 2) {
    for (bool causal : {false, true}) {
      Measurement a;
      a.model = KernelModel::kAttention;
      a.attention = {seq, 128, causal};
      const double fwd = predict(truth, a);
      a.passes = AttentionPasses::kBackward;
      rows += fmt::format("      - [{}, {}, {:.17g}, {:.17g}]\n", seq, causal ? "causal" : "none",
                          fwd, predict(truth, a));
    }
  }
  return "- id: sdpa\n  table:\n    columns: [seq, mask, fwd, bwd]\n    rows:\n" + rows;
}

constexpr const char* kFits = R"(tables: .
fits:
  - profile: h100-sxm
    name: memory
    fit: {hbm.efficiency: [0.6, 0.99], hbm.half_size: ["0 B", "64 MB"]}
    rows:
      - {table: norms, model: memory, bytes: [4, 4096, N], measured: gbps}
  - profile: h100-sxm
    name: gemm
    fit: {gemm.max_fraction.bf16: [0.7, 0.95], gemm.k_half: [32, 512]}
    rows:
      - {table: grid, model: gemm, dtype: bf16, shape: {m: m, n: n, k: k}, measured: tflops}
  - profile: h100-sxm
    name: attention
    fit: {attention.forward.128: [0.2, 1], attention.backward.128: [0.2, 1],
          attention.seq_half.forward: [0, 2048], attention.causal_seq_factor: [1, 8]}
    rows:
      - {table: sdpa, model: attention, pass: fwd, seq: seq, head_dim: 128,
         causal: {column: mask, is: causal}, measured: fwd}
      - {table: sdpa, model: attention, pass: bwd, seq: seq, head_dim: 128,
         causal: {column: mask, is: causal}, measured: bwd}
)";

TEST(MicrobenchCalibrate, RecoversAKnownPerturbation) {
  TempDir dir;
  const hw::Profile base = hw::load_profile("h100-sxm");
  hw::Profile truth = base;
  truth.hbm_efficiency = 0.84;
  truth.hbm_half_bytes = 20e6;
  truth.gemm.max_fraction = 0.82;
  truth.gemm.k_half = 220;
  truth.attention.forward[1].fraction = 0.66;  // head dim 128
  truth.attention.backward[1].fraction = 0.58;
  truth.attention.seq_half_forward = 400;
  truth.attention.causal_seq_factor = 3.0;
  ASSERT_EQ(truth.attention.forward[1].head_dim, 128);
  dir.write("tables.yaml", memory_table(truth) + gemm_table(truth) + attention_table(truth));
  const std::string fits = dir.write("fits.yaml", kFits);
  const MicrobenchCalibration c = calibrate_microbench(fits, base, {});
  const std::string text = microbench_report(c);
  const std::vector<double> want = {0.84, 20e6, 0.82, 220, 0.66, 0.58, 400, 3.0};
  std::size_t i = 0;
  for (const FitOutcome& f : c.fits) {
    for (const ParameterValue& v : f.values) {
      ASSERT_LT(i, want.size());
      EXPECT_NEAR(v.value, want[i], 0.02 * want[i]) << v.scalar.path << "\n" << text;
      ++i;
    }
  }
  EXPECT_EQ(i, want.size());
  // The written profile extends the base and reads back to the fitted values, maps whole.
  const std::string path = dir.write("fitted.yaml", microbench_profile_yaml(c, "fitted", fits));
  const hw::Profile back = hw::load_profile(path);
  EXPECT_NEAR(back.gemm.max_fraction, c.fits[1].values[0].value, 1e-6);
  EXPECT_NEAR(back.attention.forward[1].fraction, c.fits[2].values[0].value, 1e-3);
  EXPECT_DOUBLE_EQ(back.attention.forward[0].fraction, base.attention.forward[0].fraction);
  // --fit narrows the scalars; the others keep the base's values.
  const MicrobenchCalibration one = calibrate_microbench(fits, base, {"gemm.k_half"});
  ASSERT_EQ(one.fits.size(), 1u);
  EXPECT_EQ(one.fitted.gemm.max_fraction, base.gemm.max_fraction);
}

TEST(MicrobenchCalibrate, RefusesAMalformedFitsFile) {
  TempDir dir;
  dir.write("tables.yaml", memory_table(hw::load_profile("h100-sxm")));
  auto error = [&](const std::string& from, const std::string& to) {
    std::string text = R"(fits:
  - profile: h100-sxm
    name: memory
    fit: {hbm.efficiency: [0.6, 0.99]}
    rows:
      - {table: norms, model: memory, bytes: [4, 4096, N], measured: gbps}
)";
    text.replace(text.find(from), from.size(), to);
    const std::string path = dir.write("fits.yaml", text);
    return error_of([&] { (void)calibrate_microbench(path, hw::load_profile("h100-sxm"), {}); });
  };
  const std::string table = error("table: norms", "table: norm");
  EXPECT_NE(table.find("fits.yaml:6:17: error: "), std::string::npos) << table;
  EXPECT_NE(table.find("no microbenchmark 'norm'"), std::string::npos) << table;
  EXPECT_NE(table.find("did you mean 'norms'?"), std::string::npos) << table;
  EXPECT_NE(error("gbps", "gbs").find("'norms' has no column 'gbs'"), std::string::npos);
  EXPECT_NE(error("hbm.efficiency", "hbm.eficiency")
                .find("fits.yaml:4:11: error: 'hbm.eficiency' is not a number of the profile"),
            std::string::npos);
  EXPECT_NE(error("[0.6, 0.99]", "[0.99, 0.6]").find("are not an interval"), std::string::npos);
  EXPECT_NE(error("model: memory, bytes: [4, 4096, N]",
                  "model: gemm, dtype: bf16, shape: {m: N, n: N, kk: N}")
                .find("did you mean 'k'?"),
            std::string::npos);
  EXPECT_NE(error("model: memory", "model: memroy").find("did you mean 'memory'"),
            std::string::npos);
  EXPECT_NE(error("profile: h100-sxm", "profile: a100-sxm-80gb")
                .find("no fit applies to profile 'h100-sxm' (the file has fits for "
                      "a100-sxm-80gb)"),
            std::string::npos);
  EXPECT_NE(error("fit: {hbm.efficiency: [0.6, 0.99]}", "fit: {hbm.half_size: null}")
                .find("has no upper bound in the table"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::experiments::calibrate
