// SPDX-License-Identifier: Apache-2.0
// `tessera calibrate` on runs with Kineto traces: traces of rank 0 "measured" by Tessera itself
// on a profile with known changes (each compute span a kernel named as PyTorch names its
// class), with no step time written, give the changes back, including two the step time alone
// cannot tell apart (the math rate and the HBM rate).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "experiments/calibrate/calibrate.h"
#include "experiments/pipeline.h"
#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::experiments::calibrate {
namespace {

using testing::TempDir;

const std::string kTiny = std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml";

std::string kernel_name(graph::OpClass op) {
  switch (op) {
    case graph::OpClass::kGemm:
      return "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64";
    case graph::OpClass::kAttention:
      return "flash_fwd_kernel";
    case graph::OpClass::kNorm:
      return "rms_norm_kernel";
    case graph::OpClass::kOptimizer:
      return "multi_tensor_apply_kernel_adam";
    default:
      return "vectorized_elementwise_kernel";
  }
}

// A Kineto trace of rank 0 of `s` on `truth`: one ProfilerStep, a kernel per compute span.
std::string trace_of(synth::Scenario s, const hw::Profile& truth) {
  s.cluster.profile = truth;
  RunOptions opt;
  opt.timeline = true;
  opt.timeline_ranks = {0};
  const Outcome o = simulate_scenario(s, opt);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "X"},
                    {"cat", "user_annotation"},
                    {"name", "ProfilerStep#1"},
                    {"pid", 1},
                    {"tid", 1},
                    {"ts", 0.0},
                    {"dur", o.stats.step_time_s * 1e6}});
  int correlation = 0;
  for (const sim::Span& sp : o.stats.spans) {
    if (sp.rank != 0 || sp.kind != graph::NodeKind::kCompute) {
      continue;
    }
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", kernel_name(sp.op)},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", base::to_seconds(sp.start) * 1e6},
                      {"dur", base::to_seconds(sp.end - sp.start) * 1e6},
                      {"args", {{"stream", 7}, {"correlation", ++correlation}, {"device", 0}}}});
  }
  nlohmann::json doc = {{"schemaVersion", 1},
                        {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA H100 80GB HBM3"}}}},
                        {"distributedInfo", {{"backend", "nccl"}, {"rank", 0}}},
                        {"traceEvents", events}};
  return doc.dump();
}

const std::vector<std::string> kSets = {
    "model.hidden=4096;model.heads=32;model.ffn=16384;training.seq_len=4096",
    "model.hidden=2048;model.heads=16;model.ffn=8192;training.global_batch=32",
    "parallelism.tp=1;parallelism.dp=4;model.hidden=3072;model.heads=24;model.ffn=12288",
};

TEST(TraceCalibrate, KernelTimesSeparateTheMathAndHbmRates) {
  TempDir dir;
  const hw::Profile base = hw::load_profile("h100-sxm");
  hw::Profile truth = base;
  truth.under_load.math = 0.82;
  truth.hbm_efficiency = 0.75;
  std::string csv = "id,scenario,set,step_time_s,source,trace\n";
  for (std::size_t i = 0; i < kSets.size(); ++i) {
    std::vector<std::string> sets;
    for (std::size_t a = 0, b = 0; a < kSets[i].size(); a = b + 1) {
      b = kSets[i].find(';', a);
      b = b == std::string::npos ? kSets[i].size() : b;
      sets.push_back(kSets[i].substr(a, b - a));
    }
    dir.write(fmt::format("r{}.json", i), trace_of(synth::load_scenario(kTiny, sets), truth));
    csv += fmt::format("r{},{},\"{}\",,{},r{}.json\n", i, kTiny, kSets[i], i == 2 ? "other" : "own",
                       i);
  }
  const runs::RunsFile file = runs::read_runs(dir.write("runs.csv", csv));
  Options opt;
  opt.fit = {"under_load.math", "hbm.efficiency"};
  const Calibration c = calibrate(file, base, opt);
  const std::string text = report(c);
  ASSERT_EQ(c.parameters.size(), 2u);
  EXPECT_NEAR(c.parameters[0].value, 0.82, 0.02 * 0.82) << text;
  EXPECT_NEAR(c.parameters[1].value, 0.75, 0.02 * 0.75) << text;
  for (const RunResidual& r : c.runs) {
    EXPECT_GE(r.categories.size(), 2u) << r.run->id;  // gemm and norm at least
    for (const CategoryResidual& k : r.categories) {
      EXPECT_NEAR(k.fitted_s / k.measured_s, 1.0, 0.01) << r.run->id << " " << k.name;
    }
  }
  EXPECT_NE(text.find("kernel time per step from the runs' traces"), std::string::npos);
  EXPECT_EQ(c.folds.size(), 2u);  // sources own and other, each left out
}

TEST(TraceCalibrate, RefusesAMissingTrace) {
  TempDir dir;
  const std::string csv = dir.write(
      "runs.csv", "id,scenario,set,step_time_s,source,trace\nr0," + kTiny + ",,,own,nope.json\n");
  const std::string e = testing::error_of([&] { (void)runs::read_runs(csv); });
  EXPECT_NE(e.find("runs.csv:2:1: error: trace '"), std::string::npos) << e;
  EXPECT_NE(e.find("nope.json' does not exist"), std::string::npos) << e;
  const std::string empty =
      dir.write("empty.csv", "id,scenario,set,step_time_s\nr0," + kTiny + ",,\n");
  EXPECT_NE(testing::error_of([&] {
              (void)runs::read_runs(empty);
            }).find("with a step time in seconds > 0"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::experiments::calibrate
