// SPDX-License-Identifier: Apache-2.0
// StageBuilder's data-parallel part: gradient buckets reduced over the data-parallel group as
// backward finishes them, the optimizer step (distributed optimizer: shard, then parameter
// gather), the tied-embedding and DualPipe mirror reductions.
#include <algorithm>
#include <utility>

#include "synth/build/optimizer_step.h"
#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

// The gradient domains of this rank: the dense parameters over the data-parallel group with
// context parallelism and, with MoE layers, the routed experts' over the expert-data-parallel
// group (Megatron-Core keeps them in buffers of their own, bucketed and sharded the same way).
std::vector<GradDomain> StageBuilder::grad_domains() const {
  const auto& groups = c_.group_of[static_cast<std::size_t>(rank_)];
  const ParallelConfig& p = c_.s.parallel;
  std::vector<GradDomain> out{{c_.dp_cp_group_of[static_cast<std::size_t>(rank_)],
                               static_cast<double>(p.shard_dp() * p.cp), false,
                               c_.replica_group_of[static_cast<std::size_t>(rank_)]}};
  if (c_.s.model.moe.on()) {
    out.push_back({groups[static_cast<std::size_t>(Axis::kEDP)],
                   static_cast<double>(c_.s.parallel.edp()), true, -1});
  }
  return out;
}

// The blocks whose gradients of domain `d` this rank reduces, in model order: the encoder's
// first when they are reduced here (dense only), then the LLM's.
std::vector<StageBuilder::GradBlock> StageBuilder::grad_blocks(const GradDomain& d) const {
  std::vector<GradBlock> grads;
  if (!d.experts && holds_encoder_grads() &&
      c_.s.schedule.encoder_backward != EncoderBackward::kOwner) {
    const parallel::EncoderProgram& rep = enc_->representative();
    auto layers = static_cast<std::size_t>(enc_->layers());
    for (std::size_t k = enc_begin_; k < enc_end_; ++k) {
      const BlockProgram& p = rep.block(k, layers);
      const auto& last = last_bwd_node_[total_blocks_ + k];
      GradBlock gb{
          p.params, {}, static_cast<std::int64_t>(k) - static_cast<std::int64_t>(enc_end_)};
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
    GradBlock gb{
        d.experts ? p.expert_params : p.params - p.expert_params, {}, static_cast<std::int64_t>(k)};
    for (std::size_t j = 0; j < p.wgrad_ops.size(); ++j) {
      const bool expert = j < p.wgrad_expert.size() && p.wgrad_expert[j];
      if (expert == d.experts) {
        gb.wgrads.push_back(last_bwd_node_[k][static_cast<std::size_t>(p.wgrad_ops[j] - p.n_fwd)]);
      }
    }
    grads.push_back(std::move(gb));
  }
  return grads;
}

// A domain's gradients in buckets formed from the last block backward, each with the
// position of the block that completes it and the weight-gradient nodes it waits for.
std::vector<StageBuilder::Bucket> StageBuilder::plan_buckets(
    const GradDomain& d, const std::vector<GradBlock>& grads) const {
  const Scenario& s = c_.s;
  double total = 0.0;
  for (const GradBlock& gb : grads) {
    total += gb.params;
  }
  // Megatron-Core without overlap_grad_reduce: one bucket (bucket_size = None), reduced
  // after the backward pass.
  const bool overlap = s.training.overlap_grad_reduce;
  const double cap = overlap ? grad_bucket_params(s) : total;
  std::vector<Bucket> out;
  Bucket cur;
  for (std::size_t k = grads.size(); k-- > 0;) {
    cur.wgrads.insert(cur.wgrads.end(), grads[k].wgrads.begin(), grads[k].wgrads.end());
    cur.params += grads[k].params;
    cur.order = grads[k].order;
    if ((cur.params >= cap || k == 0) && cur.params > 0.0) {
      out.push_back(std::move(cur));
      cur = Bucket{};
    }
  }
  if (!overlap && d.group >= 0 && !out.empty()) {  // the one bucket waits for every gradient
    out.front().wgrads.clear();
    for (const GradBlock& gb : grads) {
      out.front().wgrads.insert(out.front().wgrads.end(), gb.wgrads.begin(), gb.wgrads.end());
    }
  }
  return out;
}

// Gradients accumulate over microbatches; after the last backward of each bucket's blocks
// the bucket is reduced over its domain's group (the domains' buckets in the order backward
// completes them), then the optimizer steps (distributed optimizer: on its shard, then
// gathers parameters).
void StageBuilder::gradient_reduction(double params) {
  const Scenario& s = c_.s;
  const std::vector<GradDomain> domains = grad_domains();
  std::vector<std::pair<std::size_t, Bucket>> plan;  // (domain, bucket)
  std::vector<NodeId> wgrads;                        // every weight gradient (DualPipe)
  // The parameters each domain's optimizer shards: the experts', and all the others (the
  // encoder's included, also when its owners reduce them).
  std::vector<double> domain_params(domains.size(), 0.0);
  double expert_params = 0.0;
  for (std::size_t i = 0; i < domains.size(); ++i) {
    const std::vector<GradBlock> grads = grad_blocks(domains[i]);
    for (Bucket& b : plan_buckets(domains[i], grads)) {
      plan.emplace_back(i, std::move(b));
    }
    for (const GradBlock& gb : grads) {
      wgrads.insert(wgrads.end(), gb.wgrads.begin(), gb.wgrads.end());
      domain_params[i] += domains[i].experts ? gb.params : 0.0;
    }
    expert_params += domain_params[i];
  }
  for (std::size_t i = 0; i < domains.size(); ++i) {
    domain_params[i] = domains[i].experts ? domain_params[i] : params - expert_params;
  }
  std::stable_sort(plan.begin(), plan.end(),
                   [](const auto& a, const auto& b) { return a.second.order > b.second.order; });
  // ZeRO-2/3 reduced each unit's gradients after its backward (sharded_units.cpp).
  std::vector<NodeId> buckets = s.zero_stage() >= 2 ? unit_reductions_ : std::vector<NodeId>{};
  std::vector<std::vector<double>> bucket_params(domains.size());
  for (const auto& [i, b] : plan) {
    const GradDomain& d = domains[i];
    bucket_params[i].push_back(b.params);
    if (s.zero_stage() >= 2) {
      continue;
    }
    if (d.group < 0) {
      buckets.insert(buckets.end(), b.wgrads.begin(), b.wgrads.end());
      continue;
    }
    buckets.push_back(reduce_bucket(d, b));
  }
  embedding_reduction(buckets);
  // DualPipe: ranks r and N-1-r hold the same two stages (one per direction); their gradients
  // are summed before the step (DeepSeek-V3 section 3.2.1: two copies of the parameters).
  std::int32_t mirror = c_.mirror_group_of[static_cast<std::size_t>(rank_)];
  if (mirror >= 0) {
    buckets.push_back(dp_collective(
        graph::CollType::kAllReduce, mirror, params * s.training.grad_bytes(),
        s.training.grad_dtype(), wgrads, c_.reduction_names.mirror_grad, graph::Phase::kBackward));
  }
  if (enc_allreduce_ != kNone) {
    buckets.push_back(enc_allreduce_);
  }
  double shard = 0.0;
  for (std::size_t i = 0; i < domains.size(); ++i) {
    const bool dist = s.zero_stage() >= 1 && domains[i].group >= 0;
    shard += dist ? domain_params[i] / domains[i].ranks : domain_params[i];
  }
  NodeId o = add_optimizer_step(g_, s.training, c_.optimizer_names, params, shard, buckets);
  for (std::size_t i = 0; i < domains.size(); ++i) {
    gather_params(domains[i], domain_params[i], bucket_params[i], o);
  }
}

// One bucket of domain d reduced over its group: all-reduced, or with the distributed
// optimizer reduce-scattered (HSDP: over the shard group, then all-reduced over the replicas).
NodeId StageBuilder::reduce_bucket(const GradDomain& d, const Bucket& b) {
  const TrainingConfig& t = c_.s.training;
  const bool dist = c_.s.zero_stage() >= 1;
  NodeId r = dp_collective(dist ? graph::CollType::kReduceScatter : graph::CollType::kAllReduce,
                           d.group, b.params * t.grad_bytes(), t.grad_dtype(), b.wgrads,
                           c_.reduction_names.grad_bucket, graph::Phase::kBackward);
  if (d.replicas < 0) {
    return r;
  }
  return dp_collective(graph::CollType::kAllReduce, d.replicas, b.params / d.ranks * t.grad_bytes(),
                       t.grad_dtype(), {r}, c_.reduction_names.replica_grad,
                       graph::Phase::kBackward);
}

// The distributed optimizer's (ZeRO-1 and 2) parameter all-gathers of domain d after the
// step; ZeRO-3 gathers each unit before its compute instead. With
// overlap_param_gather the next step's forward gathers the LLM's buckets (param_gathers);
// what it does not cover (the encoder's parameters) is gathered here.
void StageBuilder::gather_params(const GradDomain& d, double total,
                                 std::vector<double> bucket_params, NodeId after) {
  const Scenario& s = c_.s;
  if (s.zero_stage() == 0 || s.zero_stage() == 3 || d.group < 0) {
    return;
  }
  const double gathered = gathered_params_[d.experts ? 1 : 0];
  if (gathered > 0.0) {
    double rest = total - gathered;
    bucket_params.assign(rest > 0.5 ? 1 : 0, rest);
  }
  // The LLM's FP8 weights (fp8_param_gather) spread over its buckets in proportion; what is
  // left after the overlapped gathers is the encoder's.
  double saving = 0.0;
  for (std::size_t k = 0; k < blocks_.size() && gathered <= 0.0; ++k) {
    saving += fp8_gather_saving(k, d);
  }
  const double bytes_per_param =
      base::dtype_bytes(s.training.precision) - (total > 0.0 ? saving / total : 0.0);
  for (double bp : bucket_params) {
    dp_collective(graph::CollType::kAllGather, d.group, bp * bytes_per_param, s.training.precision,
                  {after}, c_.reduction_names.param_gather, graph::Phase::kOptimizer);
  }
}

// An embedding table on several ranks: the first stage's and its copies (a tied output
// layer's on the last stage, multi-token prediction's on its stage) sum their gradients over
// the embedding group (Megatron's _allreduce_embedding_grads). A copy's block is the last of
// its rank's (the head, or the MTP block just before the loss stage).
void StageBuilder::embedding_reduction(std::vector<NodeId>& before_optimizer) {
  std::int32_t group = c_.embed_group_of[static_cast<std::size_t>(rank_)];
  if (group < 0) {
    return;
  }
  const bool first = stage_ == llm_first_;  // holds the embedding; the others a copy
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
  if (s.zero_stage() >= 2) {  // the copies sum their gradient shards
    table /= grad_domains().front().ranks;
  }
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
