// SPDX-License-Identifier: Apache-2.0
// `training:`, `parallelism:` and `data:` (the modality mix, from ranges or a samples file).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>

#include "synth/scenario/readers.h"
#include "synth/scenario/unmodelled_keys.h"

namespace tessera::synth::reader {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 22> kTrainingKeys = {"seq_len",
                                                            "global_batch",
                                                            "micro_batch",
                                                            "precision",
                                                            "fp8_recipe",
                                                            "fp8_param_gather",
                                                            "recompute",
                                                            "attention",
                                                            "elementwise",
                                                            "distributed_optimizer",
                                                            "grad_bucket",
                                                            "overlap_grad_reduce",
                                                            "overlap_param_gather",
                                                            "overlap_p2p_comm",
                                                            "cuda_graphs",
                                                            "clip_grad",
                                                            "transformer_impl",
                                                            "gradient_accumulation_fusion",
                                                            "grad_reduce_in_fp32",
                                                            "cross_entropy_fusion",
                                                            "reshard_after_forward",
                                                            "backward_prefetch"};
constexpr std::array<std::string_view, 18> kParallelKeys = {"tp",
                                                            "pp",
                                                            "dp",
                                                            "cp",
                                                            "cp_comm",
                                                            "sp",
                                                            "ep",
                                                            "etp",
                                                            "order",
                                                            "stage_layers",
                                                            "first_stage_layers",
                                                            "last_stage_layers",
                                                            "tp_comm_overlap",
                                                            "async_tp_allreduce",
                                                            "ep_comm_overlap",
                                                            "pipeline_layout",
                                                            "zero",
                                                            "dp_shard"};

// Sets `out` (a bool or a std::optional<bool>) from the optional boolean `key` of `n`;
// absent, the default stays.
template <typename Flag>
void read_bool(const YamlNode& n, std::string_view key, Flag& out) {
  if (auto v = n.find(key)) {
    out = v->as_bool();
  }
}

// training.backward_prefetch: pre or post (FSDP1's BACKWARD_PRE and BACKWARD_POST).
void read_backward_prefetch(const YamlNode& n, TrainingConfig& t) {
  if (auto v = n.find("backward_prefetch")) {
    constexpr std::array<std::string_view, 2> kPrefetch = {"pre", "post"};
    t.backward_prefetch =
        v->as_choice(kPrefetch) == "pre" ? BackwardPrefetch::kPre : BackwardPrefetch::kPost;
  }
}

// A fixed value ("4") or an inclusive range ("[0, 4]").
IntRange read_range(const YamlNode& n, std::int64_t min, std::int64_t max) {
  if (!n.is_seq()) {
    std::int64_t v = n.as_int(min, max);
    return {v, v};
  }
  auto items = n.items();
  if (items.size() != 2) {
    n.fail("expected a value or a range [lo, hi]");
  }
  IntRange r{items[0].as_int(min, max), items[1].as_int(min, max)};
  if (r.hi < r.lo) {
    n.fail(fmt::format("the range [{}, {}] is empty", r.lo, r.hi));
  }
  return r;
}

// "images,tokens_per_image" per line; '#' starts a comment.
std::vector<std::pair<std::int64_t, std::int64_t>> read_samples(const YamlNode& at,
                                                                const std::string& file) {
  const DataFile data = read_data_file(at, file, "samples file");
  const std::string& path = data.path;
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& [no, line] : data.lines) {
    long long images = -1;
    long long tokens = -1;
    char comma = 0;
    std::istringstream fields(line);
    fields >> images >> comma >> tokens;
    std::string rest;
    fields >> rest;
    if (fields.fail() && !fields.eof()) {
      images = -1;
    }
    if (comma != ',' || images < 0 || tokens < 1 || !rest.empty() || images > 1024 ||
        tokens > (1 << 20)) {
      throw base::InputError(base::SourceLoc{path, no, 1},
                             "expected 'images,tokens_per_image' (0 <= images <= 1024, "
                             "1 <= tokens_per_image <= 1048576), got '" +
                                 line + "'");
    }
    out.emplace_back(images, tokens);
  }
  if (out.empty()) {
    at.fail(fmt::format("the samples file '{}' lists no samples", path));
  }
  return out;
}

std::vector<Axis> read_order(const YamlNode& n) {
  return mesh_order(n.as_choice(mesh_orders()));
}

// `cp` and `cp_comm` (Megatron's --context-parallel-size and --cp-comm-type).
// `precision` and `fp8_recipe`. FP8 keeps bf16 tensors (the linear GEMMs run in FP8); the
// recipe defaults to delayed scaling, Transformer Engine's and Megatron-Core's default.
void read_precision(const YamlNode& n, TrainingConfig& t) {
  constexpr std::array<std::string_view, 3> kPrec = {"bf16", "fp16", "fp8"};
  constexpr std::array<std::string_view, 4> kRecipes = {"delayed", "tensorwise", "blockwise",
                                                        "mxfp8"};
  std::string prec = "bf16";
  if (auto v = n.find("precision")) {
    prec = v->as_choice(kPrec);
  }
  t.precision = prec == "fp16" ? base::DType::kFP16 : base::DType::kBF16;
  t.fp8 = prec == "fp8" ? Fp8Recipe::kDelayed : Fp8Recipe::kNone;
  if (auto v = n.find("fp8_recipe")) {
    std::string r = v->as_choice(kRecipes);
    if (prec != "fp8") {
      v->fail(fmt::format("a scaling recipe needs precision: fp8 (precision is {})", prec),
              "set precision: fp8, or remove fp8_recipe");
    }
    t.fp8 = r == "delayed"      ? Fp8Recipe::kDelayed
            : r == "tensorwise" ? Fp8Recipe::kTensorwise
            : r == "blockwise"  ? Fp8Recipe::kBlockwise
                                : Fp8Recipe::kMxfp8;
  }
  read_bool(n, "fp8_param_gather", t.fp8_param_gather);
}

// How the framework builds the layers and their gradients: Megatron-Core's keys and defaults.
void read_framework(const YamlNode& n, TrainingConfig& t) {
  constexpr std::array<std::string_view, 2> kImpl = {"transformer_engine", "local"};
  if (auto v = n.find("transformer_impl")) {
    t.transformer_impl = v->as_choice(kImpl) == "local" ? TransformerImpl::kLocal
                                                        : TransformerImpl::kTransformerEngine;
  }
  read_bool(n, "gradient_accumulation_fusion", t.gradient_accumulation_fusion);
  read_bool(n, "grad_reduce_in_fp32", t.grad_reduce_in_fp32);
  read_bool(n, "cross_entropy_fusion", t.cross_entropy_fusion);
}

}  // namespace

void read_data(const YamlNode& n, DataConfig& d) {
  constexpr std::array<std::string_view, 4> kKeys = {"seed", "images_per_sample",
                                                     "tokens_per_image", "samples_file"};
  n.check_keys(kKeys);
  if (auto v = n.find("seed")) {
    d.seed = static_cast<std::uint64_t>(v->as_int(0));
  }
  if (auto v = n.find("samples_file")) {
    if (n.has("images_per_sample") || n.has("tokens_per_image")) {
      v->fail("give either samples_file or images_per_sample/tokens_per_image, not both");
    }
    d.samples_file = v->as_string();
    d.samples = read_samples(*v, d.samples_file);
    return;
  }
  if (auto v = n.find("images_per_sample")) {
    d.images_per_sample = read_range(*v, 0, 1024);
  }
  if (auto v = n.find("tokens_per_image")) {
    d.tokens_per_image = read_range(*v, 1, 1 << 20);
  }
}

void read_training(const YamlNode& n, TrainingConfig& t) {
  reject_unmodelled(n, "training");
  n.check_keys(kTrainingKeys);
  t.seq_len = n.at("seq_len").as_int(1, kMaxSeq);
  t.global_batch = n.at("global_batch").as_int(1, kMaxBatch);
  t.micro_batch = n.at("micro_batch").as_int(1, kMaxBatch);
  constexpr std::array<std::string_view, 3> kAttention = {"flash", "flash2", "unfused"};
  read_precision(n, t);
  if (auto v = n.find("recompute")) {
    const std::string r = v->as_choice(kRecomputeNames);
    t.recompute = static_cast<Recompute>(
        std::find(kRecomputeNames.begin(), kRecomputeNames.end(), r) - kRecomputeNames.begin());
  }
  read_bool(n, "distributed_optimizer", t.distributed_optimizer);
  read_bool(n, "reshard_after_forward", t.reshard_after_forward);
  read_backward_prefetch(n, t);
  if (auto v = n.find("attention")) {
    const std::string kernel = v->as_choice(kAttention);
    t.attention = kernel == "flash"    ? AttentionKernel::kFlash
                  : kernel == "flash2" ? AttentionKernel::kFlash2
                                       : AttentionKernel::kUnfused;
  }
  if (auto v = n.find("elementwise")) {
    constexpr std::array<std::string_view, 2> kElementwise = {"fused", "eager"};
    t.eager_elementwise = v->as_choice(kElementwise) == "eager";
  }
  read_bool(n, "overlap_grad_reduce", t.overlap_grad_reduce);
  read_bool(n, "overlap_param_gather", t.overlap_param_gather);
  read_bool(n, "overlap_p2p_comm", t.overlap_p2p_comm);
  if (auto v = n.find("grad_bucket")) {
    t.grad_bucket_bytes = v->as_quantity(base::Dimension::kBytes);
  }
  read_bool(n, "cuda_graphs", t.cuda_graphs);
  read_framework(n, t);
  if (auto v = n.find("clip_grad")) {
    t.clip_grad = v->as_double();
    if (t.clip_grad < 0.0) {
      v->fail(fmt::format("expected a gradient-norm threshold >= 0 (0: no clipping), got {}",
                          v->as_string()));
    }
  }
}

void read_parallel(const YamlNode& n, ParallelConfig& p) {
  reject_unmodelled(n, "parallelism");
  n.check_keys(kParallelKeys);
  p.tp = n.has("tp") ? n.at("tp").as_int(1, kMaxDevices) : 1;
  p.pp = n.has("pp") ? n.at("pp").as_int(1, kMaxDevices) : 1;
  p.dp = 0;  // 0 (absent or `auto`): whatever the devices leave
  if (auto dp = n.find("dp"); dp && !(dp->is_scalar() && dp->as_string() == "auto")) {
    p.dp = dp->as_int(1, kMaxDevices);
  }
  read_context_parallel(n, p);
  read_sharded_data_parallel(n, p);
  read_bool(n, "sp", p.sp);
  p.ep = n.has("ep") ? n.at("ep").as_int(1, kMaxDevices) : 1;
  p.etp = n.has("etp") ? n.at("etp").as_int(1, kMaxDevices) : 1;
  read_bool(n, "tp_comm_overlap", p.tp_comm_overlap);
  read_bool(n, "async_tp_allreduce", p.async_tp_allreduce);
  read_bool(n, "ep_comm_overlap", p.ep_comm_overlap);
  if (auto v = n.find("order")) {
    p.order = read_order(*v);
  }
  if (auto v = n.find("stage_layers")) {
    if (!v->is_seq() || v->items().empty()) {
      v->fail("expected a list of layer counts, one per pipeline stage of a pipe (e.g. [7, 8, 7])");
    }
    for (const YamlNode& c : v->items()) {
      p.stage_layers.push_back(c.as_int(1, kMaxLayers));
    }
  }
  if (auto v = n.find("first_stage_layers")) {
    p.first_stage_layers = v->as_int(1, kMaxLayers);
  }
  if (auto v = n.find("last_stage_layers")) {
    p.last_stage_layers = v->as_int(1, kMaxLayers);
  }
  if (auto v = n.find("pipeline_layout")) {
    if (!p.stage_layers.empty() || p.first_stage_layers > 0 || p.last_stage_layers > 0) {
      v->fail(
          "give either pipeline_layout or stage_layers / first_stage_layers / "
          "last_stage_layers, not both",
          "the layout's t's give each stage's decoder layers");
    }
    p.layout = read_pipeline_layout(*v);
    for (const PipelineStage& st : p.layout) {
      p.stage_layers.push_back(st.layers);
    }
  }
}

}  // namespace tessera::synth::reader
