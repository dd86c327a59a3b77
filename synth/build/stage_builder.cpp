// SPDX-License-Identifier: Apache-2.0
#include "synth/build/stage_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace tessera::synth::detail {

NodeId StageBuilder::p2p(graph::NodeKind kind, std::int64_t peer, std::int64_t tag,
                         std::int64_t bytes, NodeId dep, std::uint32_t name, std::int32_t mb) {
  Node n;
  n.kind = kind;
  bool grad = tag % 2 == 1;
  n.stream = kind == graph::NodeKind::kSend
                 ? (grad ? graph::Stream::kPPSendBwd : graph::Stream::kPPSendFwd)
                 : (grad ? graph::Stream::kPPRecvBwd : graph::Stream::kPPRecvFwd);
  n.peer = static_cast<std::int32_t>(peer);
  n.tag = tag;
  n.bytes = static_cast<double>(bytes);
  n.name = name;
  n.microbatch = mb;
  n.dtype = c_.s.training.precision;
  if (kind == graph::NodeKind::kSend) {
    n.mem_free = bytes;
  } else {
    n.mem_alloc = bytes;
  }
  n.phase = grad ? graph::Phase::kBackward : graph::Phase::kForward;
  if (dep == kNone) {
    return g_.add(n);
  }
  return g_.add(n, {dep});
}

NodeId StageBuilder::instantiate(const StageBlock& b, std::int32_t mb, std::int32_t begin,
                                 std::int32_t end, NodeId ext_fwd, NodeId ext_bwd, std::size_t slot,
                                 std::size_t wslot) {
  const BlockProgram& p = *b.prog;
  auto base = static_cast<NodeId>(g_.size());
  std::vector<NodeId>* last = nullptr;
  if (begin >= p.n_fwd) {
    last = &last_bwd_node_[wslot];
    last->resize(p.ops.size() - static_cast<std::size_t>(p.n_fwd), kNone);
  }
  std::vector<NodeId> deps;
  for (std::int32_t i = begin; i < end; ++i) {
    const parallel::ProgOp& op = p.ops[static_cast<std::size_t>(i)];
    Node n = op.node;
    n.name = c_.names[b.names][static_cast<std::size_t>(i)];
    n.microbatch = mb;
    n.layer = b.layer;
    if (n.kind == graph::NodeKind::kCollective) {
      n.group = c_.group_of[static_cast<std::size_t>(rank_)][op.axis];
      if (n.group < 0) {  // a group of one: nothing to communicate
        n.kind = graph::NodeKind::kCompute;
        n.fixed_duration = 0;
      }
    }
    deps.clear();
    for (std::int32_t d : op.deps) {
      NodeId id = d == parallel::kFwdInput   ? ext_fwd
                  : d == parallel::kBwdInput ? ext_bwd
                  : d >= begin               ? base + static_cast<NodeId>(d - begin)
                  : d < p.n_fwd              ? fwd_base_[slot] + static_cast<NodeId>(d)
                                             : bwd_base_[slot] + static_cast<NodeId>(d - p.n_fwd);
      if (id != kNone) {
        deps.push_back(id);
      }
    }
    if (deps.empty() && enc_gate_ != kNone && b.encoder) {  // encoder ops reading only data
      deps.push_back(enc_gate_);
    }
    NodeId id = g_.add(n, deps);
    if (last != nullptr) {
      (*last)[static_cast<std::size_t>(i - p.n_fwd)] = id;
    }
  }
  return base;
}

std::int64_t StageBuilder::rank_of_stage(std::int32_t vstage) const {
  return c_.mesh.neighbour(rank_, Axis::kPP, place_->rank_of(vstage) - stage_);
}

void StageBuilder::forward(std::int32_t mb, std::int32_t chunk) {
  const std::int32_t vs = place_->stage_of(stage_, chunk);
  if (vs < enc_stages_) {
    encoder_stage_forward(mb, vs);
    return;
  }
  const BlockProgram& layer = c_.progs.layer;
  const std::size_t mc = static_cast<std::size_t>(mb) * chunks_.size();
  NodeId prev = kNone;
  const std::int32_t before = place_->prev_stage(vs);
  if (vs == llm_first_ && enc_stages_ > 0) {  // the features from the last encoder stage
    if (!enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
      features_[static_cast<std::size_t>(mb)] =
          p2p(graph::NodeKind::kRecv, rank_of_stage(before), tag(mb, vs, false),
              enc_->feature_bytes(mb), kNone, c_.enc_misc_names[3], mb);
    }
  } else if (before >= 0) {
    std::int64_t src = rank_of_stage(before);
    prev = src == rank_ ? fwd_out_[mc + static_cast<std::size_t>(place_->chunk_of(before))]
                        : p2p(graph::NodeKind::kRecv, src, tag(mb, vs, false), layer.out_bytes,
                              kNone, c_.p2p_names[1], mb);
  }
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  const auto m = static_cast<std::size_t>(mb);
  if (vs == llm_first_ && inline_encoder_) {  // the encoder feeds pipe 0's first stage
    features_[m] = encoder_forward(mb, c_.s.encoder.trainable, kNone);
  }
  if (vs == llm_first_ && c_.s.encoder_devices() > 0 && !enc_->mix()[m].groups.empty()) {
    features_[m] =
        p2p(graph::NodeKind::kRecv, encoder_device_of(c_.mesh.coord(rank_)[Axis::kDP], mb),
            encoder_tag(mb, EncoderMessage::kFeatures), enc_->feature_bytes(mb), kNone,
            c_.enc_misc_names[3], mb);
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    std::size_t sl = slot(mb, chunk, k);
    fwd_input_[sl] = prev;
    NodeId base = instantiate(blocks[k], mb, 0, blocks[k].prog->n_fwd, prev, kNone, sl,
                              offset_[static_cast<std::size_t>(chunk)] + k);
    fwd_base_[sl] = base;
    if (blocks[k].prog->fwd_out >= 0) {
      prev = base + static_cast<NodeId>(blocks[k].prog->fwd_out);
    }
    if (vs == llm_first_ && k == 0 && enc_ != nullptr && features_[m] != kNone) {
      // The image features take their places in the embedded sequence.
      prev = marker(c_.enc_misc_names[0], mb, {prev, features_[m]}, 0, enc_->feature_bytes(mb));
    }
  }
  fwd_out_[mc + static_cast<std::size_t>(chunk)] = prev;
  const std::int32_t after = place_->next_stage(vs);
  if (after >= 0 && rank_of_stage(after) != rank_) {
    p2p(graph::NodeKind::kSend, rank_of_stage(after), tag(mb, after, false), layer.out_bytes, prev,
        c_.p2p_names[0], mb);
  }
}

// The backward of one (microbatch, chunk): the whole of it, or only its input-gradient part
// (a zero-bubble "b"; the weight-gradient part then runs in weight()).
void StageBuilder::backward(std::int32_t mb, std::int32_t chunk, schedule::Task::Kind kind) {
  const std::int32_t vs = place_->stage_of(stage_, chunk);
  if (vs < enc_stages_) {
    encoder_stage_backward(mb, vs);
    return;
  }
  const BlockProgram& layer = c_.progs.layer;
  const std::size_t mc = static_cast<std::size_t>(mb) * chunks_.size();
  NodeId grad = kNone;
  const std::int32_t after = place_->next_stage(vs);
  if (after >= 0) {
    std::int64_t src = rank_of_stage(after);
    grad = src == rank_ ? bwd_out_[mc + static_cast<std::size_t>(place_->chunk_of(after))]
                        : p2p(graph::NodeKind::kRecv, src, tag(mb, vs, true), layer.in_grad_bytes,
                              kNone, c_.p2p_names[3], mb);
  }
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  for (std::size_t k = blocks.size(); k-- > 0;) {
    const BlockProgram& p = *blocks[k].prog;
    std::size_t sl = slot(mb, chunk, k);
    std::int32_t end =
        kind == schedule::Task::kBackward ? static_cast<std::int32_t>(p.ops.size()) : p.w_begin;
    grad_input_[sl] = grad;
    NodeId base = instantiate(blocks[k], mb, p.n_fwd, end, fwd_input_[sl], grad, sl,
                              offset_[static_cast<std::size_t>(chunk)] + k);
    bwd_base_[sl] = base;
    if (p.bwd_out >= 0) {
      grad = base + static_cast<NodeId>(p.bwd_out - p.n_fwd);
    }
  }
  bwd_out_[mc + static_cast<std::size_t>(chunk)] = grad;
  if (vs == llm_first_ && enc_ != nullptr && c_.s.encoder.trainable &&
      features_[static_cast<std::size_t>(mb)] != kNone) {
    // dL/dfeatures: the image positions of the first layer's input gradient, copied out.
    feature_grad_[static_cast<std::size_t>(mb)] =
        marker(c_.enc_misc_names[9], mb, {grad}, enc_->feature_bytes(mb), 0);
    if (inline_encoder_) {
      encoder_backward(mb, feature_grad_[static_cast<std::size_t>(mb)]);
    }
    if (enc_stages_ > 0) {
      p2p(graph::NodeKind::kSend, rank_of_stage(vs - 1), tag(mb, vs - 1, true),
          enc_->feature_bytes(mb), feature_grad_[static_cast<std::size_t>(mb)],
          c_.enc_misc_names[6], mb);
    }
    // Without SP every TP rank holds the whole (replicated) gradient: the first one sends it,
    // the others need no copy.
    bool sender = c_.s.parallel.sp || c_.mesh.coord(rank_)[Axis::kTP] == 0;
    if (c_.s.encoder_devices() > 0 && !sender) {
      g_.nodes[feature_grad_[static_cast<std::size_t>(mb)]].mem_alloc = 0;
    }
    if (c_.s.encoder_devices() > 0 && sender) {
      p2p(graph::NodeKind::kSend, encoder_device_of(c_.mesh.coord(rank_)[Axis::kDP], mb),
          encoder_tag(mb, EncoderMessage::kFeatureGrads), enc_->feature_bytes(mb),
          feature_grad_[static_cast<std::size_t>(mb)], c_.enc_misc_names[6], mb);
    }
  }
  const std::int32_t before = place_->prev_stage(vs);
  if (before >= 0 && before >= enc_stages_ && rank_of_stage(before) != rank_) {
    p2p(graph::NodeKind::kSend, rank_of_stage(before), tag(mb, before, true), layer.in_grad_bytes,
        grad, c_.p2p_names[2], mb);
  }
}

void StageBuilder::weight(std::int32_t mb, std::int32_t chunk) {
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  for (std::size_t k = blocks.size(); k-- > 0;) {
    const BlockProgram& p = *blocks[k].prog;
    std::size_t sl = slot(mb, chunk, k);
    instantiate(blocks[k], mb, p.w_begin, static_cast<std::int32_t>(p.ops.size()), fwd_input_[sl],
                grad_input_[sl], sl, offset_[static_cast<std::size_t>(chunk)] + k);
  }
}

// Gradients accumulate over microbatches; after the last backward of each bucket's blocks
// the bucket is reduced over the data-parallel group (overlapping the rest of backward),
// then the optimizer steps (distributed optimizer: on its shard, then gathers parameters).
void StageBuilder::gradient_reduction(double params) {
  const Scenario& s = c_.s;
  std::int32_t dp_group =
      c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kDP)];
  bool dist = s.training.distributed_optimizer && dp_group >= 0;
  double bucket_cap = grad_bucket_params(s);
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
                        dp_group, acc * 4.0, base::DType::kFP32,  // fp32 gradients
                        buckets.empty() && !all_wgrads.empty() ? all_wgrads : ready,
                        c_.bucket_names[0], graph::Phase::kBackward));
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
    buckets.push_back(dp_collective(graph::CollType::kAllReduce, mirror, params * 4.0,
                                    base::DType::kFP32, wgrads, c_.bucket_names[3],
                                    graph::Phase::kBackward));
  }
  if (enc_allreduce_ != kNone) {
    buckets.push_back(enc_allreduce_);
  }
  Node opt;
  opt.kind = graph::NodeKind::kCompute;
  opt.op = graph::OpClass::kOptimizer;
  opt.phase = graph::Phase::kOptimizer;
  opt.dtype = base::DType::kFP32;
  double shard = dist ? params / static_cast<double>(s.parallel.dp) : params;
  opt.bytes = 32.0 * shard;  // Adam: read param, grad, master, m, v; write master, m, v, param
  opt.flops = 10.0 * shard;
  opt.name = c_.optimizer_name;
  NodeId o = g_.add(opt, buckets);
  if (dist) {
    for (double bp : bucket_params) {
      dp_collective(graph::CollType::kAllGather, dp_group,
                    bp * base::dtype_bytes(s.training.precision), s.training.precision, {o},
                    c_.bucket_names[1], graph::Phase::kOptimizer);
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
  before_optimizer.push_back(dp_collective(graph::CollType::kAllReduce, group, 4.0 * table,
                                           base::DType::kFP32, deps, c_.bucket_names[2],
                                           graph::Phase::kBackward));
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

// The i-th stage of a pipe of n stages holds layers [i*L/n, (i+1)*L/n); a pipe's first stage
// also holds the embedding, its last one the head and loss (DualPipe: each pipe a full copy).
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
    for (auto l = static_cast<std::int32_t>(cut(s.model.layers, llm_stages, slice));
         l < cut(s.model.layers, llm_stages, slice + 1); ++l) {
      blocks.push_back({&c_.progs.layer, l, static_cast<std::size_t>(2 + l)});
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

// Which encoder device runs replica `replica`'s microbatch `mb`: round-robin over the
// devices, microbatch-major, so every device starts on the earliest microbatches.

RankGraph StageBuilder::build() {
  if (rank_ >= c_.mesh.size()) {
    return build_encoder_device();
  }
  const Scenario& s = c_.s;
  stages_ = static_cast<std::int32_t>(s.parallel.pp);
  stage_ = static_cast<std::int32_t>(c_.mesh.coord(rank_)[Axis::kPP]);
  place_blocks();
  auto m = static_cast<std::int32_t>(s.microbatches());
  fwd_base_.assign(static_cast<std::size_t>(m) * total_blocks_, kNone);
  fwd_input_.assign(fwd_base_.size(), kNone);
  fwd_out_.assign(static_cast<std::size_t>(m) * chunks_.size(), kNone);
  bwd_out_.assign(fwd_out_.size(), kNone);
  bwd_base_.assign(fwd_base_.size(), kNone);
  grad_input_.assign(fwd_base_.size(), kNone);
  last_bwd_node_.assign(total_blocks_, {});
  double params = 0.0;
  for (const auto& b : blocks_) {
    params += b.prog->params;
  }
  const bool transposed = s.schedule.encoder == EncoderPlacement::kTranspose;
  if (enc_ != nullptr) {
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
  if (transposed) {
    run_transposed();
  } else {
    for (const schedule::Task& t : schedule::stage_order(s.schedule, stages_, stage_, m)) {
      run_body_task(t);
    }
  }
  if (enc_ != nullptr) {
    if (enc_stages_ == 0) {
      enc_begin_ = 0;
      enc_end_ = static_cast<std::size_t>(enc_->layers()) + 2;
    }
    const parallel::EncoderProgram& rep = enc_->representative();
    for (std::size_t k = enc_begin_; k < enc_end_; ++k) {
      enc_params_ += rep.block(k, static_cast<std::size_t>(enc_->layers())).params;
    }
  }
  if (holds_encoder_grads()) {
    params += enc_params_;
  }
  gradient_reduction(params);
  double bytes_per_param =
      s.training.distributed_optimizer ? 6.0 + 12.0 / static_cast<double>(s.parallel.dp) : 18.0;
  // Megatron's bytes per parameter: 2 (bf16 weights) + 4 (fp32 gradients) + 12 (fp32 master
  // weights and Adam moments, divided over DP with the distributed optimizer).
  g_.static_memory = static_cast<std::int64_t>(params * bytes_per_param);
  g_.weight_memory = static_cast<std::int64_t>(params * 2.0);
  g_.grad_memory = static_cast<std::int64_t>(params * 4.0);
  if (holds_encoder() && !holds_encoder_grads()) {
    // Encoder weights without gradients or optimizer state (frozen, or a replica).
    auto frozen = static_cast<std::int64_t>(enc_params_ * base::dtype_bytes(s.training.precision));
    g_.static_memory += frozen;
    g_.weight_memory += frozen;
  }
  g_.stage = stage_;
  return std::move(g_);
}

void StageBuilder::run_body_task(const schedule::Task& t) {
  switch (t.kind) {
    case schedule::Task::kForward:
      forward(t.microbatch, t.chunk);
      break;
    case schedule::Task::kBackward:
    case schedule::Task::kBackwardInput:
      backward(t.microbatch, t.chunk, t.kind);
      break;
    case schedule::Task::kWeight:
      weight(t.microbatch, t.chunk);
      break;
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
