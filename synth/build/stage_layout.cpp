// SPDX-License-Identifier: Apache-2.0
// Where a rank's blocks sit (its chunks' embedding, layers, multi-token prediction and head,
// or encoder blocks), their per-microbatch node slots, and what the rank holds for the whole
// step: its parameters' static memory and which encoder weights it keeps.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "synth/build/stage_builder.h"
#include "synth/parallel/layer_split.h"

namespace tessera::synth::detail {

// The i-th LLM stage of a pipe holds layers [bounds[i], bounds[i+1]) (parallel/layer_split.h:
// even, or the scenario's stage_layers); a pipe's first stage also holds the embedding, its
// last one the head and loss (DualPipe: each pipe a full copy).
//
// With the encoder as its own first k stages, the encoder's L+2 blocks are cut as evenly as
// they go over stages [0, k) and the LLM's layers over the other p-k (Megatron's uneven
// split: the remainder to the first stages).
void StageBuilder::place_blocks() {
  const Scenario& s = c_.s;
  place_.emplace(s.schedule, stages_);
  vstages_ = place_->stages();
  if (enc_ != nullptr && s.schedule.encoder == EncoderPlacement::kStages) {
    enc_stages_ = static_cast<std::int32_t>(s.schedule.encoder_stages);
    llm_first_ = enc_stages_;
  }
  auto cut = [](std::int64_t n, std::int64_t parts, std::int64_t i) {
    return i * (n / parts) + std::min(i, n % parts);
  };
  const std::int64_t llm_stages = place_->stages_per_pipe() - enc_stages_;
  const std::vector<std::int64_t> bounds =
      parallel::layer_bounds(s.model.layers, llm_stages,
                             parallel::stage_layer_counts(s.parallel, s.model.layers, llm_stages));
  for (std::int32_t c = 0; c < place_->chunks(); ++c) {
    std::int32_t vs = place_->stage_of(stage_, c);
    std::vector<StageBlock> blocks;
    if (vs < enc_stages_) {
      auto chain = static_cast<std::int64_t>(enc_->layers()) + 2;
      enc_begin_ = static_cast<std::size_t>(cut(chain, enc_stages_, vs));
      enc_end_ = static_cast<std::size_t>(cut(chain, enc_stages_, vs + 1));
      offset_.push_back(total_blocks_);
      chunks_.push_back({});
      continue;
    }
    std::int64_t slice = place_->stage_in_pipe(vs) - enc_stages_;
    if (place_->first_of_pipe(vs) || slice == 0) {
      blocks.push_back({&c_.progs.embed, -1, 0});
    }
    for (auto l = static_cast<std::int32_t>(bounds[static_cast<std::size_t>(slice)]);
         l < bounds[static_cast<std::size_t>(slice) + 1]; ++l) {
      blocks.push_back({&c_.progs.of_layer(l), l, static_cast<std::size_t>(2 + l)});
    }
    if (slice == s.parallel.mtp_stage_apart()) {  // a layout's "m" before its "L" stage
      blocks.push_back({&*c_.progs.mtp, -1, static_cast<std::size_t>(2 + s.model.layers)});
    }
    if (place_->last_of_pipe(vs)) {
      blocks.push_back({&c_.progs.head, -1, 1});
    }
    offset_.push_back(total_blocks_);
    total_blocks_ += blocks.size();
    blocks_.insert(blocks_.end(), blocks.begin(), blocks.end());
    chunks_.push_back(std::move(blocks));
  }
}

// Per-microbatch node slots of the LLM's blocks and chunks.
void StageBuilder::allocate_slots(std::int32_t m) {
  fwd_base_.assign(static_cast<std::size_t>(m) * total_blocks_, kNone);
  fwd_input_.assign(fwd_base_.size(), kNone);
  fwd_out_.assign(static_cast<std::size_t>(m) * chunks_.size(), kNone);
  bwd_out_.assign(fwd_out_.size(), kNone);
  bwd_base_.assign(fwd_base_.size(), kNone);
  grad_input_.assign(fwd_base_.size(), kNone);
  last_bwd_node_.assign(total_blocks_, {});
  units_.assign(total_blocks_, {});
  fp8_cast_done_.assign(chunks_.size(), 0);
}

// The encoder's node slots after the LLM's: one group of layers + 2 per image group.
void StageBuilder::allocate_encoder_slots(std::int32_t m) {
  const Scenario& s = c_.s;
  inline_encoder_ = s.schedule.encoder == EncoderPlacement::kInline;
  enc_slot_base_ = fwd_base_.size();
  std::size_t per_group = static_cast<std::size_t>(enc_->layers()) + 2;
  std::size_t total = 0;
  for (const auto& mix : enc_->mix()) {
    enc_offset_.push_back(total);
    total += mix.groups.size() * per_group;
  }
  for (auto* v : {&fwd_base_, &fwd_input_, &bwd_base_, &grad_input_}) {
    v->resize(enc_slot_base_ + total, kNone);
  }
  last_bwd_node_.resize(total_blocks_ + per_group);
  features_.assign(static_cast<std::size_t>(m), kNone);
  feature_grad_.assign(features_.size(), kNone);
  enc_input_.assign(features_.size(), kNone);
  enc_saved_.assign(features_.size(), 0);
}

// The encoder parameters this rank holds (the blocks of its encoder stage, or all of them).
void StageBuilder::count_encoder_params() {
  if (enc_stages_ == 0) {
    enc_begin_ = 0;
    enc_end_ = static_cast<std::size_t>(enc_->layers()) + 2;
  }
  const parallel::EncoderProgram& rep = enc_->representative();
  for (std::size_t k = enc_begin_; k < enc_end_; ++k) {
    enc_params_ += rep.block(k, static_cast<std::size_t>(enc_->layers())).params;
  }
}

// Static memory: weights, gradients and optimizer state of `params`, the FP8 weight copies,
// and frozen or replicated encoder weights.
void StageBuilder::account_static_memory(double params) {
  const Scenario& s = c_.s;
  // Megatron's bytes per parameter: 2 (bf16 weights) + 4 (fp32 main gradients; 2 when they
  // stay fp16) + 12 (fp32 master weights and Adam moments; 16 with the fp32 copy of fp16
  // gradients), what the ZeRO stage shards divided over the dense parameters' shard group
  // (DP x CP, under HSDP dp_shard x CP) and over EDP for the routed experts'.
  const std::int64_t zero = s.zero_stage();
  double experts = 0.0;
  for (const auto& b : blocks_) {
    experts += b.prog->expert_params;
  }
  const std::vector<GradDomain> domains = grad_domains();
  const double dense_shards = domains.front().ranks;
  const double expert_shards = static_cast<double>(s.parallel.edp());
  auto bytes = [&](double dense_per_param, double expert_per_param) {
    return static_cast<std::int64_t>((params - experts) * dense_per_param +
                                     experts * expert_per_param);
  };
  g_.static_memory = bytes(s.training.static_bytes_per_param(zero, dense_shards),
                           s.training.static_bytes_per_param(zero, expert_shards));
  auto shard = [&](double shards, std::int64_t stage) { return zero >= stage ? shards : 1.0; };
  g_.weight_memory = bytes(2.0 / shard(dense_shards, 3), 2.0 / shard(expert_shards, 3));
  g_.grad_memory = bytes(s.training.grad_bytes() / shard(dense_shards, 2),
                         s.training.grad_bytes() / shard(expert_shards, 2));
  // FP8 weight copies (and their scales), cached over the step, count as weights; with
  // fp8_param_gather the row-wise copy is the parameter, and no bf16 copy of it is kept.
  const auto fp8 = static_cast<std::int64_t>(fp8_static_bytes() - fp8_param_bytes_saved());
  g_.static_memory += fp8;
  g_.weight_memory += fp8;
  if (holds_encoder() && !holds_encoder_grads()) {
    // Encoder weights without gradients or optimizer state (frozen, or a replica).
    auto frozen = static_cast<std::int64_t>(enc_params_ * base::dtype_bytes(s.training.precision));
    g_.static_memory += frozen;
    g_.weight_memory += frozen;
  }
}

// Whether this rank holds encoder weights: the first stage (inline), every rank (transpose),
// the encoder's own stages.
bool StageBuilder::holds_encoder() const {
  if (enc_ == nullptr) {
    return false;
  }
  switch (c_.s.schedule.encoder) {
    case EncoderPlacement::kInline:
      return stage_ == 0;
    case EncoderPlacement::kTranspose:
      return true;
    case EncoderPlacement::kStages:
      return stage_ < enc_stages_;
    case EncoderPlacement::kSeparate:
      return false;
  }
  return false;
}

// Whether this rank keeps gradients and optimizer state of the encoder: the ranks that run
// it inline or as stages, the first stage under centralized recompute, every rank under
// owner-backward.
bool StageBuilder::holds_encoder_grads() const {
  if (!holds_encoder() || !c_.s.encoder.trainable) {
    return false;
  }
  if (c_.s.schedule.encoder == EncoderPlacement::kTranspose) {
    return c_.s.schedule.encoder_backward == EncoderBackward::kOwner || stage_ == 0;
  }
  return true;
}

}  // namespace tessera::synth::detail
