// SPDX-License-Identifier: Apache-2.0
// The runs file reader (experiments/runs/): the corpus schema into scenarios with the
// framework defaults of docs/runs.md, the runs it cannot express with their reasons, the errors
// of a malformed file at file:line:col, and the CSV form.
#include <gtest/gtest.h>

#include <string>

#include "experiments/runs/evaluate.h"
#include "experiments/runs/runs_file.h"
#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::experiments::runs {
namespace {

using testing::error_of;
using testing::TempDir;

// A runs file with one model and the cases given; the header is 9 lines long, so the first
// case starts on line 10.
std::string runs_yaml(const std::string& cases) {
  return "models:\n"
         "  small:\n"
         "    layers: 4\n"
         "    hidden: 1024\n"
         "    heads: 16\n"
         "    kv_heads: 8\n"
         "    ffn: 4096\n"
         "    vocab: 32000\n"
         "cases:\n" +
         cases;
}

// One Megatron-Bridge case on 8 H100; `parallelism` and `extra` lines replace the defaults.
std::string megatron_case(const std::string& id,
                          const std::string& parallelism = "tp: 2, pp: 2, dp: 2",
                          const std::string& measured = "tokens_per_s_per_gpu: 10000",
                          const std::string& precision = "bf16") {
  return "- id: " + id + "\n" +                                              // +0
         "  source: {ref: NVIDIA-NeMo/Megatron-Bridge docs/perf.md @abc}\n"  // +1
         "  model: small\n"                                                  // +2
         "  training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: " +
         precision + ", recompute: none}\n" +                                            // +3
         "  parallelism: {" + parallelism + "}\n" +                                      // +4
         "  cluster: {hardware: DGX-H100 (H100 SXM 80GB), gpus: 8, gpus_per_node: 8}\n"  // +5
         "  measured: {" +
         measured + "}\n";  // +6
}

RunsFile read(const TempDir& dir, const std::string& text) {
  return read_runs(dir.write("runs.yaml", text));
}

TEST(RunsFile, ReadsTheCorpusSchema) {
  TempDir dir;
  RunsFile f = read(dir, runs_yaml(megatron_case("dense-8")));
  ASSERT_EQ(f.runs.size(), 1u);
  const runs::Run& r = f.runs[0];
  ASSERT_TRUE(r.scenario) << r.skip;
  EXPECT_EQ(r.id, "dense-8");
  EXPECT_EQ(r.source, "NVIDIA-NeMo/Megatron-Bridge");
  EXPECT_EQ(r.hardware, "h100-sxm");
  EXPECT_EQ(r.precision, "bf16");
  EXPECT_EQ(r.scenario->parallel.tp, 2);
  EXPECT_EQ(r.scenario->parallel.pp, 2);
  EXPECT_EQ(r.scenario->parallel.dp, 2);
  EXPECT_TRUE(r.scenario->parallel.sp);                     // not stated: on with TP
  EXPECT_TRUE(r.scenario->training.distributed_optimizer);  // Megatron's recipes
  EXPECT_EQ(r.scenario->cluster.topology.source, "dgx-h100-superpod");
  EXPECT_DOUBLE_EQ(r.measured_step_s(0.0), 64.0 * 2048.0 / (10000.0 * 8.0));
  EXPECT_NE(r.scenario_text.find("model:\n  layers: 4\n"), std::string::npos) << r.scenario_text;
}

TEST(RunsFile, FrameworkDefaultsAndPrecisions) {
  TempDir dir;
  const std::string titan =
      "- id: titan\n"
      "  source: {ref: pytorch/torchtitan benchmarks/x.md}\n"
      "  model: small\n"
      "  training:\n"
      "    seq_len: '8192 [U: default toml]'\n"
      "    global_batch: 16\n"
      "    micro_batch: 2\n"
      "    precision: amp_bf16\n"
      "    recompute: selective (op-level SAC)\n"
      "  parallelism: {fsdp: 8, dp: 8, tp: 1, pp: 1}\n"
      "  cluster: {hardware: H100 80GB, gpus: 8}\n"
      "  measured: {step_time_s: 2.5}\n";
  RunsFile f = read(dir, runs_yaml(titan +
                                   megatron_case("vp", "tp: 2, pp: 2, dp: 2, vp: 2",
                                                 "step_time_ms: 900", "fp8 (TE)") +
                                   megatron_case("cs", "tp: 1, pp: 1, dp: 8", "step_time_s: 1",
                                                 "fp8 per-tensor current scaling (FP8-CS)")));
  const runs::Run& t = f.runs[0];
  ASSERT_TRUE(t.scenario) << t.skip;
  EXPECT_EQ(t.scenario->zero_stage(), 3);
  EXPECT_EQ(t.scenario->training.seq_len, 8192);
  EXPECT_EQ(t.scenario->training.fp8, synth::Fp8Recipe::kNone);
  EXPECT_EQ(t.scenario->training.recompute, synth::Recompute::kSelectiveOp);  // op-level SAC
  EXPECT_EQ(t.precision, "bf16");
  const runs::Run& v = f.runs[1];
  ASSERT_TRUE(v.scenario) << v.skip;
  EXPECT_EQ(v.scenario->schedule.kind, synth::ScheduleKind::kInterleaved);
  EXPECT_EQ(v.scenario->schedule.chunks, 2);
  EXPECT_EQ(v.scenario->training.fp8, synth::Fp8Recipe::kDelayed);
  EXPECT_DOUBLE_EQ(v.measured_step_s(0.0), 0.9);
  EXPECT_EQ(v.precision, "fp8");
  ASSERT_TRUE(f.runs[2].scenario) << f.runs[2].skip;
  EXPECT_EQ(f.runs[2].scenario->training.fp8, synth::Fp8Recipe::kTensorwise);
}

TEST(RunsFile, LayersThePipelineDoesNotDivide) {
  TempDir dir;
  // 6 layers on 4 stages: 8 slots with the embedding and the loss, two per stage.
  std::string text = runs_yaml(megatron_case("uneven", "tp: 1, pp: 4, dp: 2"));
  text.replace(text.find("layers: 4"), 9, "layers: 6");
  RunsFile f = read(dir, text);
  ASSERT_TRUE(f.runs[0].scenario) << f.runs[0].skip;
  EXPECT_NE(f.runs[0].scenario_text.find("pipeline_layout: \"Et|tt|tt|tL\""), std::string::npos)
      << f.runs[0].scenario_text;
}

// TorchTitan under pipelining, as of its December 2024 benchmarks: FSDP keeps each unit
// gathered from its forward to its backward (no resharding), and a rank's batch is split into
// one microbatch per pipeline rank where the table does not give the size. NeMo AutoModel (its
// MoE models, October 2025) did not reshard under pipelining either.
TEST(RunsFile, TorchTitanPipelineDefaults) {
  TempDir dir;
  const std::string titan =
      "- id: titan-pp\n"
      "  source: {ref: pytorch/torchtitan benchmarks/x.md}\n"
      "  model: small\n"
      "  training: {seq_len: 2048, global_batch: 64, micro_batch: not stated, precision: bf16,"
      " recompute: full}\n"
      "  parallelism: {fsdp: 4, dp: 4, tp: 1, pp: 2}\n"
      "  cluster: {hardware: H100 80GB, gpus: 8}\n"
      "  measured: {step_time_s: 2.5}\n";
  std::string automodel = titan;
  automodel.replace(automodel.find("titan-pp"), 8, "auto-pp");
  automodel.replace(automodel.find("pytorch/torchtitan"), 18, "NVIDIA-NeMo/Automodel");
  RunsFile f = read(dir, runs_yaml(titan + automodel));
  const runs::Run& t = f.runs[0];
  ASSERT_TRUE(t.scenario) << t.skip;
  EXPECT_FALSE(t.scenario->reshards_after_forward()) << t.scenario_text;
  EXPECT_EQ(t.scenario->training.micro_batch, 8);  // 64 / (4 data-parallel x 2 pipeline ranks)
  EXPECT_FALSE(t.scenario->training.fp8_param_gather);
  const runs::Run& a = f.runs[1];  // AutoModel: no resharding either, microbatches of 1
  ASSERT_TRUE(a.scenario) << a.skip;
  EXPECT_FALSE(a.scenario->reshards_after_forward()) << a.scenario_text;
  EXPECT_EQ(a.scenario->training.micro_batch, 1);
}

// torchao's FSDP float8 all-gather, where a TorchTitan row names it, gathers FP8 weights.
TEST(RunsFile, TorchTitanFloat8AllGather) {
  TempDir dir;
  const std::string titan =
      "- id: titan-f8\n"
      "  source: {ref: pytorch/torchtitan benchmarks/x.md}\n"
      "  model: small\n"
      "  training: {seq_len: 2048, global_batch: 64, micro_batch: 2, precision: 'float8 linears"
      " (fsdp float8 all-gather, precomputed scales) + bf16', recompute: full}\n"
      "  parallelism: {fsdp: 8, dp: 8, tp: 1, pp: 1}\n"
      "  cluster: {hardware: H100 80GB, gpus: 8}\n"
      "  measured: {step_time_s: 2.5}\n";
  RunsFile f = read(dir, runs_yaml(titan));
  ASSERT_TRUE(f.runs[0].scenario) << f.runs[0].skip;
  EXPECT_TRUE(f.runs[0].scenario->training.fp8_param_gather) << f.runs[0].scenario_text;
  EXPECT_EQ(f.runs[0].scenario->training.fp8, synth::Fp8Recipe::kTensorwise);
}

// FSDP1's backward_prefetch, as a row or its recipe names it (Composer's BACKWARD_POST).
TEST(RunsFile, Fsdp1BackwardPrefetch) {
  TempDir dir;
  auto composer = [](const std::string& id, const std::string& prefetch) {
    return "- id: " + id +
           "\n"
           "  source: {ref: mosaicml/llm-foundry scripts/train/benchmarking/README.md}\n"
           "  model: small\n"
           "  training: {seq_len: 2048, global_batch: 64, micro_batch: 8, precision: bf16,\n"
           "             backward_prefetch: " +
           prefetch +
           "}\n"
           "  parallelism: {fsdp: 8, dp: 8, tp: 1, pp: 1}\n"
           "  cluster: {hardware: H100 80GB, gpus: 8}\n"
           "  measured: {step_time_s: 2.5}\n";
  };
  RunsFile f = read(
      dir, runs_yaml(composer("post", "BACKWARD_POST") + composer("pre", "backward_pre") +
                     composer("unknown", "'[U]'") + composer("vague", "'presumably the default'")));
  ASSERT_EQ(f.runs.size(), 4U);
  EXPECT_EQ(f.runs[0].scenario->training.backward_prefetch, synth::BackwardPrefetch::kPost)
      << f.runs[0].scenario_text;
  EXPECT_EQ(f.runs[1].scenario->training.backward_prefetch, synth::BackwardPrefetch::kPre);
  EXPECT_FALSE(f.runs[2].scenario->training.backward_prefetch) << "unknown: FSDP's default";
  EXPECT_FALSE(f.runs[3].scenario->training.backward_prefetch) << "no value named";
}

// Megatron-Bridge's model providers fuse the cross-entropy (cross_entropy_loss_fusion) and its
// FP8 presets gather FP8 weights (fp8_param_gather); NeMo's runs keep Megatron-Core's defaults.
TEST(RunsFile, MegatronBridgeDefaults) {
  TempDir dir;
  std::string nemo = megatron_case("nemo", "tp: 2, pp: 2, dp: 2", "tokens_per_s_per_gpu: 10000",
                                   "fp8 current scaling");
  nemo.replace(nemo.find("NVIDIA-NeMo/Megatron-Bridge"), 27, "NVIDIA/NeMo");
  RunsFile f =
      read(dir, runs_yaml(megatron_case("bridge") +
                          megatron_case("bridge-fp8", "tp: 2, pp: 2, dp: 2",
                                        "tokens_per_s_per_gpu: 10000", "fp8 current scaling") +
                          nemo));
  for (const runs::Run& r : f.runs) {
    ASSERT_TRUE(r.scenario) << r.skip;
  }
  EXPECT_TRUE(f.runs[0].scenario->training.cross_entropy_fusion);
  EXPECT_FALSE(f.runs[0].scenario->training.fp8_param_gather);  // bf16
  EXPECT_TRUE(f.runs[1].scenario->training.fp8_param_gather);
  EXPECT_FALSE(f.runs[2].scenario->training.cross_entropy_fusion);
  EXPECT_FALSE(f.runs[2].scenario->training.fp8_param_gather);
}

// The token dispatcher and routing a run names: Megatron-Core's flex dispatcher (DeepEP or
// HybridEP) and NeMo AutoModel's DeepEP kernels are the node-deduplicated dispatch, its fake
// balanced gate round-robin routing, its "gmm experts" one grouped kernel; "token-dropless"
// routing drops nothing.
TEST(RunsFile, DeepEpDispatchAndFakeBalancedGate) {
  TempDir dir;
  std::string text = runs_yaml(megatron_case("flex", "tp: 1, pp: 1, dp: 8, ep: 8") +
                               megatron_case("automodel", "tp: 1, pp: 1, dp: 8, ep: 8") +
                               megatron_case("plain", "tp: 1, pp: 1, dp: 8, ep: 8"));
  text.replace(text.find("    vocab: 32000\n"), 17,
               "    vocab: 32000\n    moe: {routed_experts: 8, top_k: 2, expert_ffn: 512}\n");
  const std::string training = "recompute: none}";
  std::size_t at = text.find(training);
  text.replace(at, training.size(), "recompute: none, moe_dispatcher: flex/HybridEP}");
  at = text.find(training, at + 1);
  text.replace(at, training.size(),
               "recompute: none, kernels: TE + DeepEP (gmm experts), routing: fake balanced "
               "gate}");
  at = text.find(training, at + 1);
  text.replace(at, training.size(), "recompute: none, routing: 'force-balanced, token-dropless'}");
  RunsFile f = read(dir, text);
  ASSERT_EQ(f.runs.size(), 3U);
  for (const runs::Run& r : f.runs) {
    ASSERT_TRUE(r.scenario) << r.id << ": " << r.skip;
  }
  EXPECT_EQ(f.runs[0].scenario->model.moe.dispatcher, synth::MoeDispatcher::kDeepEP);
  EXPECT_EQ(f.runs[0].scenario->model.moe.routing.kind, synth::RoutingKind::kBalanced);
  EXPECT_EQ(f.runs[1].scenario->model.moe.dispatcher, synth::MoeDispatcher::kDeepEP);
  EXPECT_EQ(f.runs[1].scenario->model.moe.routing.kind, synth::RoutingKind::kRoundRobin);
  EXPECT_EQ(f.runs[2].scenario->model.moe.dispatcher, synth::MoeDispatcher::kAllToAll);
  EXPECT_EQ(f.runs[2].scenario->model.moe.capacity_factor, 0.0);  // dropless is no dropping
  EXPECT_EQ(f.runs[0].scenario->model.moe.grouped_gemm, synth::GroupedGemm::kPerExpert);
  EXPECT_EQ(f.runs[1].scenario->model.moe.grouped_gemm, synth::GroupedGemm::kSingle);
}

TEST(RunsFile, RunsItCannotExpressSayWhy) {
  TempDir dir;
  const std::string text =
      runs_yaml(megatron_case("mx", "tp: 1, pp: 1, dp: 8", "step_time_s: 1", "mxfp8 (FP8-MX)") +
                megatron_case("deep", "tp: 1, pp: 8, dp: 1", "step_time_s: 1"));
  RunsFile f = read(dir, text);
  ASSERT_EQ(f.runs.size(), 2u);
  EXPECT_FALSE(f.runs[0].scenario);
  // MXFP8 on an H100: the loader's reason (no MX block-scaled tensor cores), at the precision.
  EXPECT_NE(f.runs[0].skip.find("MX block scales"), std::string::npos) << f.runs[0].skip;
  EXPECT_EQ(f.runs[0].skip_at.line, 13);
  // 8 stages of a 4-layer model: the scenario loader's reason, at the run's `pp`.
  EXPECT_FALSE(f.runs[1].scenario);
  EXPECT_NE(f.runs[1].skip.find("pp"), std::string::npos) << f.runs[1].skip;
  EXPECT_EQ(f.runs[1].skip_at.line, 21) << f.runs[1].skip_at.str();
  EXPECT_FALSE(evaluate(f)[1].simulated);
}

TEST(RunsFile, MalformedFilesAreErrorsAtTheirPlace) {
  TempDir dir;
  auto err = [&](const std::string& text) { return error_of([&] { (void)read(dir, text); }); };
  EXPECT_NE(err(runs_yaml(megatron_case("x", "tp: two, pp: 1, dp: 8"))).find("runs.yaml:14:"),
            std::string::npos);
  EXPECT_NE(
      err(runs_yaml(megatron_case("x", "tp: 1, pp: 1, dp: 8", ""))).find("has no measurement"),
      std::string::npos);
  EXPECT_NE(err(runs_yaml(megatron_case("x", "tp: 2, pp: 2, dp: 4")))
                .find("2 x 2 x 1 x 4 = 16 GPUs, but it names 8"),
            std::string::npos);
  EXPECT_NE(err(runs_yaml(megatron_case("x") + megatron_case("x"))).find("a second run with id"),
            std::string::npos);
  EXPECT_NE(err(runs_yaml("[]\n")).find("at least one"), std::string::npos);
  std::string unknown = runs_yaml(megatron_case("x"));
  unknown.replace(unknown.find("hardware: DGX-H100 (H100 SXM 80GB)"), 34, "profile: h100-sxn");
  const std::string e = err(unknown);
  EXPECT_NE(e.find("runs.yaml:15:"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'h100-sxm'"), std::string::npos) << e;
}

TEST(RunsFile, CsvOfScenariosAndOverrides) {
  TempDir dir;
  const std::string scenario = std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml";
  std::string path = dir.write(
      "runs.csv", "id,scenario,set,step_time_s\n" + std::string("a,") + scenario +
                      ",\"parallelism.tp=4;parallelism.dp=1\",0.002\nb," + scenario + ",,0.001\n");
  RunsFile f = read_runs(path);
  ASSERT_EQ(f.runs.size(), 2u);
  EXPECT_EQ(f.runs[0].scenario->parallel.tp, 4);
  EXPECT_EQ(f.runs[1].scenario->parallel.tp, 2);
  EXPECT_DOUBLE_EQ(f.runs[1].measured_step_s(0.0), 0.001);
  std::vector<RunResult> one = evaluate(f, 1);
  std::vector<RunResult> two = evaluate(f, 2);
  ASSERT_TRUE(one[0].simulated && one[1].simulated);
  EXPECT_GT(one[1].predicted_s, 0.0);
  EXPECT_EQ(one[1].predicted_s, two[1].predicted_s);
  EXPECT_NE(
      error_of([&] { (void)read_runs(dir.write("bad.csv", "id,scenario\n")); }).find("bad.csv:1:1"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              (void)read_runs(dir.write("none.csv", "id,scenario,set,step_time_s\n"));
            }).find("lists no run"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::experiments::runs
