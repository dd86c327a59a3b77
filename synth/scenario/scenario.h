// SPDX-License-Identifier: Apache-2.0
// A scenario: the model, the training setup, the parallelism, the pipeline schedule and the
// cluster of one experiment, as read (strictly) from scenarios/<name>.yaml.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/dtype.h"
#include "sim/base/error.h"
#include "topology/cluster.h"

namespace tessera::synth {

enum class Activation : unsigned char { kGelu, kSwiglu };
enum class NormKind : unsigned char { kLayerNorm, kRmsNorm };
enum class Recompute : unsigned char { kNone, kSelective, kFull };
enum class AttentionKernel : unsigned char { kFlash, kUnfused };
// pipeline_schedules.md: gpipe 2.1, 1f1b 2.2, interleaved 2.3, zb-h1 2.4, zb-h2 2.5,
// dualpipev 2.8, dualpipe 2.7 (two pipes, see schedule::Placement).
enum class ScheduleKind : unsigned char {
  kGpipe,
  k1F1B,
  kInterleaved,
  kZbH1,
  kZbH2,
  kDualPipeV,
  kDualPipe
};
enum class Axis : unsigned char { kTP, kDP, kPP };

struct ModelConfig {
  std::string preset;  // "" when spelled out
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // == heads: MHA; fewer: GQA
  std::int64_t ffn = 0;
  std::int64_t vocab = 0;
  Activation activation = Activation::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool tied_embeddings = false;
  double dropout = 0.0;  // > 0: dropout masks are kept for backward
  bool bias = true;      // linear layers carry biases (GPT) or not (Llama)

  [[nodiscard]] std::int64_t head_dim() const { return hidden / heads; }
  [[nodiscard]] double parameters() const;  // total trainable parameters
};

struct TrainingConfig {
  std::int64_t seq_len = 0;
  std::int64_t global_batch = 0;  // sequences per step
  std::int64_t micro_batch = 0;
  base::DType precision = base::DType::kBF16;
  Recompute recompute = Recompute::kNone;
  bool distributed_optimizer = false;
  AttentionKernel attention = AttentionKernel::kFlash;
  double grad_bucket_bytes = 0.0;  // DP gradient bucket size; 0: Megatron's default
  // Reduce gradient buckets while backward still runs (Megatron-Core DDP, 2023 on); off: one
  // reduction after the whole backward pass (Megatron-LM's LocalDDP of 2021-22).
  bool overlap_grad_reduce = true;
};

struct ParallelConfig {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  bool sp = false;                                              // sequence parallel (needs tp > 1)
  std::vector<Axis> order = {Axis::kTP, Axis::kDP, Axis::kPP};  // innermost first
};

// The pipeline schedule: a skeleton and its parameters.
struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::k1F1B;
  std::int64_t chunks = 1;  // interleaved: model chunks (virtual stages) per rank, v
  std::int64_t group = 0;   // interleaved: microbatches per group per chunk; 0: pp (Megatron)
};

struct ClusterConfig {
  std::string hardware;  // profile name or path
  base::SourceLoc hardware_at;
  topology::TopologySpec topology;
  std::int64_t devices = 0;
  base::SourceLoc devices_at;
};

struct Scenario {
  std::string name;
  std::string file;
  ModelConfig model;
  TrainingConfig training;
  ParallelConfig parallel;
  ScheduleConfig schedule;
  ClusterConfig cluster;

  [[nodiscard]] std::int64_t microbatches() const {  // per data-parallel replica
    return training.global_batch / (parallel.dp * training.micro_batch);
  }
};

// Reads and validates a scenario; `overrides` are "key.path=value" strings (--set).
// Throws base::InputError naming file:line:col for every problem.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

std::string_view schedule_name(ScheduleKind k);
std::string schedule_label(const ScheduleConfig& cfg);  // "1f1b", "interleaved (v=2)"
std::string_view recompute_name(Recompute r);

}  // namespace tessera::synth
