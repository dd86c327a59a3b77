// SPDX-License-Identifier: Apache-2.0
// The memory-bound kernel model against the norm/softmax bandwidth tables
// (calibration/microbench/memory_bound.yaml). A kernel that moves b bytes takes
// launch.stream + b / memory_rate(b), as the simulator times it; every 4th row is held out
// of the fit (calibration/fit/fit_compute.py memory).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "hwprofiles/hw_profile.h"
#include "hwprofiles/memory_model.h"
#include "tests/hw/microbench.h"

namespace tessera::hw {
namespace {

using testing::held_out;
using testing::ReproRow;

double predicted_gbps(const Profile& p, double bytes) {
  double seconds = base::to_seconds(p.launch.stream) + bytes / memory_rate(p, bytes);
  return bytes / seconds / 1e9;
}

struct Source {
  const char* id;
  const char* column;  // GB/s column
  double rows_m;       // rows per kernel (0: the table's M column)
  double elt;          // bytes per element; bytes = 2 x M x N x elt (read x, write y)
};

void reproduce(const std::string& profile, const std::vector<Source>& sources) {
  Profile p = load_profile(profile);
  std::vector<ReproRow> rows;
  for (const Source& src : sources) {
    testing::MicrobenchTable t = testing::load_microbench("memory_bound.yaml", src.id);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      if (!t.has(i, src.column)) {
        continue;
      }
      double m = src.rows_m > 0.0 ? src.rows_m : t.num(i, "M");
      double bytes = 2.0 * m * t.num(i, "N") * src.elt;
      rows.push_back({fmt::format("{} N={}", src.id, t.num(i, "N")), t.num(i, src.column),
                      predicted_gbps(p, bytes), held_out(i)});
    }
  }
  testing::ReproScore score = testing::report("memory-bound kernels on " + profile, "GB/s", rows);
  EXPECT_LE(score.mean_held_out, 0.10);
}

TEST(MemoryRepro, H100NormsAndSoftmax) {
  reproduce("h100-sxm", {{"quack-h100-rmsnorm-bf16", "QuACK_GBps", 0.0, 2.0},
                         {"quack-h100-softmax-bf16", "QuACK_GBps", 0.0, 2.0},
                         {"liger-h100-megatron-rmsnorm-fwd-bf16", "liger_GBps_derived", 4096, 2.0},
                         {"liger-h100-layernorm-fwd-fp32", "liger_GBps_derived", 4096, 4.0}});
}

TEST(MemoryRepro, A100Norms) {
  reproduce("a100-sxm-80gb", {{"liger-a100-rmsnorm-fwd-bf16", "liger_GBps_derived", 2048, 2.0},
                              {"liger-a100-layernorm-fwd-fp32", "liger_GBps_derived", 4096, 4.0}});
}

// cuDNN norms forward (read x, write y in bf16: 4 bytes per element of N x C).
void reproduce_cudnn_norms(const std::string& profile, const std::string& id,
                           double tolerance = 0.10) {
  Profile p = load_profile(profile);
  testing::MicrobenchTable t = testing::load_microbench("memory_bound.yaml", id);
  std::vector<ReproRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (t.str(i, "backend") != "cudnn") {
      continue;
    }
    double bytes = 4.0 * t.num(i, "N") * t.num(i, "C");
    rows.push_back({fmt::format("{} {}", t.str(i, "config"), t.str(i, "norm")),
                    t.num(i, "fwd_GBps"), predicted_gbps(p, bytes), held_out(i)});
  }
  testing::ReproScore score = testing::report(id + " forward on " + profile, "GB/s", rows);
  EXPECT_LE(score.mean_held_out, tolerance);
}

TEST(MemoryRepro, H200CudnnNorms) {
  reproduce_cudnn_norms("h200-sxm", "cudnn-norms-h200-bf16");
}

// B200 has no table of its own and takes GB200's fit (the same HBM3e stacks). 15%: the
// table's 128-wide rows (131072 x 128) are bound by per-row reductions, not by streaming, and
// its LayerNorm row carries a bias; one rate per size cannot follow those (+22..+25%).
TEST(MemoryRepro, Gb200AndB200CudnnNorms) {
  reproduce_cudnn_norms("gb200", "cudnn-norms-gb200-bf16", 0.15);
  reproduce_cudnn_norms("b200", "cudnn-norms-gb200-bf16", 0.15);
}

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

}  // namespace
}  // namespace tessera::hw
