// SPDX-License-Identifier: Apache-2.0
// StageBuilder's data-parallel part: gradient buckets reduced over the data-parallel group as
// backward finishes them, the optimizer step (distributed optimizer: shard, then parameter
// gather), the tied-embedding and DualPipe mirror reductions.
#include <algorithm>

#include "synth/build/optimizer_step.h"
#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

// Gradients accumulate over microbatches; after the last backward of each bucket's blocks
// the bucket is reduced over the data-parallel group (overlapping the rest of backward),
// then the optimizer steps (distributed optimizer: on its shard, then gathers parameters).
void StageBuilder::gradient_reduction(double params) {
  const Scenario& s = c_.s;
  std::int32_t dp_group =
      c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kDP)];
  bool dist = s.training.distributed_optimizer && dp_group >= 0;
  // Megatron-Core without overlap_grad_reduce: one bucket (bucket_size = None), reduced
  // after the backward pass.
  double bucket_cap = s.training.overlap_grad_reduce ? grad_bucket_params(s) : params;
  // The blocks whose gradients this rank reduces, in model order: the encoder's first when
  // they are reduced here, then the LLM's.
  struct GradBlock {
    double params;
    std::vector<NodeId> wgrads;
  };
  std::vector<GradBlock> grads;
  if (holds_encoder_grads() && s.schedule.encoder_backward != EncoderBackward::kOwner) {
    const parallel::EncoderProgram& rep = enc_->representative();
    auto layers = static_cast<std::size_t>(enc_->layers());
    for (std::size_t k = enc_begin_; k < enc_end_; ++k) {
      const BlockProgram& p = rep.block(k, layers);
      const auto& last = last_bwd_node_[total_blocks_ + k];
      GradBlock gb{p.params, {}};
      for (std::int32_t w : p.wgrad_ops) {
        auto i = static_cast<std::size_t>(w - p.n_fwd);
        if (i < last.size() && last[i] != kNone) {
          gb.wgrads.push_back(last[i]);
        }
      }
      grads.push_back(std::move(gb));
    }
  }
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const BlockProgram& p = *blocks_[k].prog;
    GradBlock gb{p.params, {}};
    for (std::int32_t w : p.wgrad_ops) {
      gb.wgrads.push_back(last_bwd_node_[k][static_cast<std::size_t>(w - p.n_fwd)]);
    }
    grads.push_back(std::move(gb));
  }
  std::vector<NodeId> ready;
  std::vector<NodeId> buckets;
  std::vector<double> bucket_params;
  double acc = 0.0;
  std::vector<NodeId> all_wgrads;  // without overlap, the first bucket waits for all of them
  for (std::size_t k = 0; k < grads.size() && !s.training.overlap_grad_reduce; ++k) {
    all_wgrads.insert(all_wgrads.end(), grads[k].wgrads.begin(), grads[k].wgrads.end());
  }
  auto flush = [&] {
    if (acc <= 0.0) {
      return;
    }
    if (dp_group < 0) {
      buckets.insert(buckets.end(), ready.begin(), ready.end());
    } else {
      buckets.push_back(
          dp_collective(dist ? graph::CollType::kReduceScatter : graph::CollType::kAllReduce,
                        dp_group, acc * s.training.grad_bytes(), s.training.grad_dtype(),
                        buckets.empty() && !all_wgrads.empty() ? all_wgrads : ready,
                        c_.reduction_names.grad_bucket, graph::Phase::kBackward));
      bucket_params.push_back(acc);
    }
    ready.clear();
    acc = 0.0;
  };
  for (std::size_t k = grads.size(); k-- > 0;) {
    ready.insert(ready.end(), grads[k].wgrads.begin(), grads[k].wgrads.end());
    acc += grads[k].params;
    if (acc >= bucket_cap) {
      flush();
    }
  }
  flush();
  embedding_reduction(buckets);
  // DualPipe: ranks r and N-1-r hold the same two stages (one per direction); their gradients
  // are summed before the step (DeepSeek-V3 section 3.2.1: two copies of the parameters).
  std::int32_t mirror = c_.mirror_group_of[static_cast<std::size_t>(rank_)];
  if (mirror >= 0) {
    std::vector<NodeId> wgrads;
    for (const GradBlock& gb : grads) {
      wgrads.insert(wgrads.end(), gb.wgrads.begin(), gb.wgrads.end());
    }
    buckets.push_back(dp_collective(
        graph::CollType::kAllReduce, mirror, params * s.training.grad_bytes(),
        s.training.grad_dtype(), wgrads, c_.reduction_names.mirror_grad, graph::Phase::kBackward));
  }
  if (enc_allreduce_ != kNone) {
    buckets.push_back(enc_allreduce_);
  }
  double shard = dist ? params / static_cast<double>(s.parallel.dp) : params;
  NodeId o = add_optimizer_step(g_, s.training, c_.optimizer_names, params, shard, buckets);
  if (dist && gathered_params_ > 0.0) {  // overlap_param_gather: the next step's forward
    // gathers the LLM's buckets (param_gathers); what it does not cover (the encoder's
    // parameters) is gathered here.
    double rest = params - gathered_params_;
    bucket_params.assign(rest > 0.5 ? 1 : 0, rest);
  }
  if (dist) {
    for (double bp : bucket_params) {
      dp_collective(graph::CollType::kAllGather, dp_group,
                    bp * base::dtype_bytes(s.training.precision), s.training.precision, {o},
                    c_.reduction_names.param_gather, graph::Phase::kOptimizer);
    }
  }
}

// Tied embeddings over several stages: the first stage's table and the last stage's copy
// sum their gradients over the embedding group (Megatron's _allreduce_embedding_grads).
void StageBuilder::embedding_reduction(std::vector<NodeId>& before_optimizer) {
  std::int32_t group = c_.embed_group_of[static_cast<std::size_t>(rank_)];
  if (group < 0) {
    return;
  }
  const bool first = stage_ == llm_first_;  // holds the embedding; the other holds the head
  const StageBlock& b = first ? blocks_.front() : blocks_.back();
  std::size_t k = first ? 0 : blocks_.size() - 1;
  // Megatron's finalize_model_grads: the data-parallel gradient reduction finishes first,
  // then the embedding gradients are summed (after the whole pipeline schedule).
  std::vector<NodeId> deps = before_optimizer;
  for (std::int32_t w : b.prog->wgrad_ops) {
    deps.push_back(last_bwd_node_[k][static_cast<std::size_t>(w - b.prog->n_fwd)]);
  }
  const Scenario& s = c_.s;
  double table = static_cast<double>(models::padded_vocab(s) / s.parallel.tp * s.model.hidden);
  before_optimizer.push_back(dp_collective(
      graph::CollType::kAllReduce, group, s.training.grad_bytes() * table, s.training.grad_dtype(),
      deps, c_.reduction_names.embedding_grad, graph::Phase::kBackward));
}

NodeId StageBuilder::dp_collective(graph::CollType type, std::int32_t group, double bytes,
                                   base::DType dtype, const std::vector<NodeId>& deps,
                                   std::uint32_t name, graph::Phase phase) {
  Node n;
  n.kind = graph::NodeKind::kCollective;
  n.coll = type;
  n.stream = graph::Stream::kDP;
  n.group = group;
  n.bytes = bytes;
  n.dtype = dtype;
  n.phase = phase;
  n.name = name;
  if (group < 0) {  // a group of one: nothing to communicate
    n.kind = graph::NodeKind::kCompute;
    n.fixed_duration = 0;
  }
  return g_.add(n, deps);
}

}  // namespace tessera::synth::detail
