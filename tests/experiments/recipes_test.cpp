// SPDX-License-Identifier: Apache-2.0
// A recipes file (experiments/runs/recipes.h): a recipe's settings fill what a run leaves out
// or marks unknown, the run's own values stand, the run's notes say what came from where, and
// a malformed recipes file is an error at its file:line:col.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "experiments/runs/runs_file.h"
#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::experiments::runs {
namespace {

using testing::error_of;
using testing::TempDir;

// Two Megatron-Bridge runs of a small MoE model on 8 H100s: `a` states its dispatcher and
// leaves its recompute to the recipe; `b` states neither.
constexpr const char* kRuns =
    "models:\n"
    "  moe:\n"
    "    {layers: 4, hidden: 1024, heads: 16, kv_heads: 8, ffn: 4096, vocab: 32000,\n"
    "     moe: {routed_experts: 16, top_k: 2, expert_ffn: 512}}\n"
    "cases:\n"
    "- id: a\n"
    "  source: {ref: NVIDIA-NeMo/Megatron-Bridge docs/perf.md @abc}\n"
    "  model: moe\n"
    "  training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: fp8 current "
    "scaling,\n"
    "             recompute: '[U] not in table; see recipe', moe_dispatcher: alltoall}\n"
    "  parallelism: {tp: 1, pp: 1, dp: 8, ep: 8}\n"
    "  cluster: {hardware: DGX-H100 (H100 SXM 80GB), gpus: 8, gpus_per_node: 8}\n"
    "  measured: {tokens_per_s_per_gpu: 10000}\n"
    "- id: b\n"
    "  source: {ref: NVIDIA-NeMo/Megatron-Bridge docs/perf.md @abc}\n"
    "  model: moe\n"
    "  training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16}\n"
    "  parallelism: {tp: 1, pp: 1, dp: 8, ep: 8}\n"
    "  cluster: {hardware: DGX-H100 (H100 SXM 80GB), gpus: 8, gpus_per_node: 8}\n"
    "  measured: {tokens_per_s_per_gpu: 10000}\n";

// One recipe for the runs given (a YAML flow list), setting what both runs might leave out.
std::string recipe(const std::string& runs, const std::string& recompute = "full") {
  return "recipes:\n"
         "- runs: " +
         runs +
         "\n"
         "  config: MOE_CONFIG_H100\n"
         "  source: NVIDIA-NeMo/Megatron-Bridge@abc scripts/performance/moe.py\n"
         "  training:\n"
         "    moe_dispatcher: flex/HybridEP\n"
         "    recompute: " +
         recompute +
         "\n"
         "    grad_reduce_in_fp32: false\n"
         "    fp8_param_gather: true\n"
         "    cuda_graphs: local full iteration\n";
}

TEST(Recipes, FillWhatARunLeavesOutAndKeepWhatItStates) {
  TempDir dir;
  const RunsFile f =
      read_runs(dir.write("runs.yaml", kRuns), dir.write("recipes.yaml", recipe("[a, b]")));
  ASSERT_EQ(f.runs.size(), 2U);
  const synth::Scenario& a = f.runs[0].scenario.value();
  const synth::Scenario& b = f.runs[1].scenario.value();
  EXPECT_EQ(a.model.moe.dispatcher, synth::MoeDispatcher::kAllToAll);  // the run's own
  EXPECT_EQ(b.model.moe.dispatcher, synth::MoeDispatcher::kDeepEP);    // the recipe's
  EXPECT_EQ(a.training.recompute, synth::Recompute::kFull);  // "[U] not in table": the recipe's
  EXPECT_EQ(b.training.recompute, synth::Recompute::kFull);
  EXPECT_FALSE(a.training.grad_reduce_in_fp32.value_or(true));
  EXPECT_TRUE(a.training.fp8_param_gather);   // an FP8 run gathers FP8 weights
  EXPECT_FALSE(b.training.fp8_param_gather);  // a BF16 one has none to gather
  EXPECT_TRUE(b.training.cuda_graphs);
  EXPECT_EQ(f.runs[0].notes.back(),
            "from recipe MOE_CONFIG_H100: training.recompute, training.grad_reduce_in_fp32, "
            "training.fp8_param_gather, training.cuda_graphs");
  // Without the recipes file the runs read as before: Megatron-Core's defaults.
  const RunsFile plain = read_runs(dir.write("plain.yaml", kRuns));
  EXPECT_EQ(plain.runs[1].scenario->model.moe.dispatcher, synth::MoeDispatcher::kAllToAll);
  EXPECT_FALSE(plain.runs[1].scenario->training.cuda_graphs);
}

// Megatron-Core's --recompute-modules without the attention core rerun nothing Tessera
// models; with it, the attention core (selective).
TEST(Recipes, RecomputeModulesWithoutTheAttentionCoreRerunNothing) {
  TempDir dir;
  const std::string runs = dir.write("runs.yaml", kRuns);
  const RunsFile modules =
      read_runs(runs, dir.write("m.yaml", recipe("[b]", "'selective [mla_up_proj, moe_act]'")));
  EXPECT_EQ(modules.runs[1].scenario->training.recompute, synth::Recompute::kNone);
  const std::vector<std::string>& notes = modules.runs[1].notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n == "recompute of modules [mla_up_proj, moe_act] not modelled: nothing rerun";
  }));
  const RunsFile core =
      read_runs(runs, dir.write("c.yaml", recipe("[b]", "'selective [core_attn, moe_act]'")));
  EXPECT_EQ(core.runs[1].scenario->training.recompute, synth::Recompute::kSelective);
}

TEST(Recipes, MalformedRecipesAreErrorsAtTheirPlace) {
  TempDir dir;
  const std::string runs = dir.write("runs.yaml", kRuns);
  auto err = [&](const std::string& text) {
    return error_of([&] { (void)read_runs(runs, dir.write("r.yaml", text)); });
  };
  EXPECT_NE(
      err(recipe("[a, c]")).find("r.yaml:2:13: error: 'recipes[0].runs[1]': no run with id 'c'"),
      std::string::npos)
      << err(recipe("[a, c]"));
  EXPECT_NE(err(recipe("[a]") + recipe("[a]").substr(9)).find("named by a second recipe"),
            std::string::npos);
  EXPECT_NE(err(recipe("[]")).find("at least one"), std::string::npos);
  EXPECT_NE(err("recipes: []\n").find("r.yaml:1:10"), std::string::npos);
  std::string typo = recipe("[a]");
  typo.replace(typo.find("  config:"), 9, "  confg:");
  EXPECT_NE(err(typo).find("did you mean 'config'"), std::string::npos) << err(typo);
  // A value taken from the recipe is checked where it is written: in the recipes file.
  const std::string bad = err(recipe("[b]", "sometimes"));
  EXPECT_NE(bad.find("r.yaml:7:"), std::string::npos) << bad;
  EXPECT_NE(bad.find("expected a recompute mode"), std::string::npos) << bad;
  // The CSV form states each run's keys itself.
  const std::string csv = dir.write("runs.csv", "id,scenario,set,step_time_s\n");
  EXPECT_NE(error_of([&] {
              (void)read_runs(csv, dir.write("r.yaml", recipe("[a]")));
            }).find("not to CSV"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::experiments::runs
