// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "base/error.h"
#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

StageBlock StageBuilder::enc_block(const parallel::EncoderProgram& p, std::size_t k) const {
  auto layers = static_cast<std::size_t>(enc_->layers());
  const std::size_t base = rank_ < c_.mesh.size() ? c_.enc_names : c_.enc_device_names;
  std::size_t names = k == 0 ? base : k == layers + 1 ? base + 1 : base + 1 + k;
  auto layer = k == 0 || k == layers + 1 ? -1 : static_cast<std::int32_t>(k - 1);
  return {&p.block(k, layers), layer, names, true};
}

// A zero-time bookkeeping node (a merge, a join, a copy of a gradient out of a larger one).
NodeId StageBuilder::marker(std::uint32_t name, std::int32_t mb, const std::vector<NodeId>& deps,
                            std::int64_t alloc, std::int64_t free) {
  Node n;
  n.kind = graph::NodeKind::kCompute;
  n.op = graph::OpClass::kCopy;
  n.fixed_duration = 0;
  n.name = name;
  n.microbatch = mb;
  n.mem_alloc = alloc;
  n.mem_free = free;
  n.phase = alloc > 0 ? graph::Phase::kBackward : graph::Phase::kForward;
  std::vector<NodeId> on;
  for (NodeId d : deps) {
    if (d != kNone) {
      on.push_back(d);
    }
  }
  return g_.add(n, on);
}

// An encoder message to or from pipeline rank `peer_stage` of this rank's pipeline.
NodeId StageBuilder::encoder_p2p(graph::NodeKind kind, std::int64_t peer_stage, std::int32_t mb,
                                 EncoderMessage what, std::int64_t bytes, NodeId dep,
                                 std::uint32_t name) {
  std::int64_t peer = c_.mesh.neighbour(rank_, Axis::kPP, peer_stage - stage_);
  std::int64_t tag = encoder_tag(mb, what);
  NodeId id = p2p(kind, peer, tag, bytes, dep, name, mb);
  Node& n = g_.nodes[id];
  if (what == EncoderMessage::kInputs) {  // pixels are data: held by the receiver until the
                                          // recompute releases them
    n.mem_free = 0;
  }
  if (what == EncoderMessage::kFeatureGrads &&
      kind == graph::NodeKind::kSend) {  // the copy dies with the send
    n.mem_free = bytes;
  }
  return id;
}

NodeId StageBuilder::encoder_forward(std::int32_t mb, bool saved, NodeId gate, std::size_t begin,
                                     std::size_t end, NodeId input, std::int32_t slot) {
  const std::int32_t sk = slot >= 0 ? slot : mb;
  const auto& groups = enc_->mix()[static_cast<std::size_t>(mb)].groups;
  if (groups.empty()) {
    return kNone;
  }
  end = std::min(end, static_cast<std::size_t>(enc_->layers()) + 2);
  auto m = static_cast<std::size_t>(mb);
  enc_saved_[m] = saved ? 1 : 0;
  NodeId keep_gate = enc_gate_;
  if (gate != kNone) {
    enc_gate_ = gate;
  }
  std::vector<NodeId> outs;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const parallel::EncoderProgram& p = enc_->get(groups[gi], saved);
    NodeId prev = input;
    for (std::size_t k = begin; k < end; ++k) {
      StageBlock b = enc_block(p, k);
      std::size_t sl = enc_slot(sk, gi, k);
      fwd_input_[sl] = prev;
      NodeId base = instantiate(b, mb, 0, b.prog->n_fwd, prev, kNone, sl, total_blocks_ + k);
      fwd_base_[sl] = base;
      prev = base + static_cast<NodeId>(b.prog->fwd_out);
    }
    outs.push_back(prev);
  }
  enc_gate_ = keep_gate;
  return outs.size() == 1 ? outs[0] : marker(c_.enc_misc_names[1], mb, outs, 0, 0);
}

NodeId StageBuilder::encoder_backward(std::int32_t mb, NodeId grad_in, std::size_t begin,
                                      std::size_t end, std::int32_t slot) {
  const std::int32_t sk = slot >= 0 ? slot : mb;
  const auto& groups = enc_->mix()[static_cast<std::size_t>(mb)].groups;
  end = std::min(end, static_cast<std::size_t>(enc_->layers()) + 2);
  std::vector<NodeId> outs;
  enc_bwd_ends_.clear();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const parallel::EncoderProgram& p = enc_->get(groups[gi], true);
    NodeId grad = grad_in;
    for (std::size_t k = end; k-- > begin;) {
      StageBlock b = enc_block(p, k);
      std::size_t sl = enc_slot(sk, gi, k);
      grad_input_[sl] = grad;
      NodeId base = instantiate(b, mb, b.prog->n_fwd, static_cast<std::int32_t>(b.prog->ops.size()),
                                fwd_input_[sl], grad, sl, total_blocks_ + k);
      bwd_base_[sl] = base;
      if (b.prog->bwd_out >= 0) {
        grad = base + static_cast<NodeId>(b.prog->bwd_out - b.prog->n_fwd);
      }
    }
    enc_bwd_ends_.push_back(static_cast<NodeId>(g_.size() - 1));  // the group's last op
    outs.push_back(grad);
  }
  if (outs.empty() || begin == 0) {  // the patch embedding passes no gradient on
    return kNone;
  }
  return outs.size() == 1 ? outs[0] : marker(c_.enc_misc_names[1], mb, outs, 0, 0);
}

// The encoder as its own pipeline stage(s): this rank's blocks of every image group, one
// message per microbatch between stages (all groups' activations together).
void StageBuilder::encoder_stage_forward(std::int32_t mb, std::int32_t vs) {
  if (enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
    return;
  }
  NodeId input = kNone;
  if (vs > 0) {
    input = p2p(graph::NodeKind::kRecv, rank_of_stage(vs - 1), tag(mb, vs, false),
                enc_->boundary_bytes(mb, enc_begin_), kNone, c_.p2p_names[1], mb);
  }
  NodeId out = encoder_forward(mb, c_.s.encoder.trainable, kNone, enc_begin_, enc_end_, input);
  p2p(graph::NodeKind::kSend, rank_of_stage(vs + 1), tag(mb, vs + 1, false),
      enc_->boundary_bytes(mb, enc_end_), out,
      vs + 1 == enc_stages_ ? c_.enc_misc_names[2] : c_.p2p_names[0], mb);
}

void StageBuilder::encoder_stage_backward(std::int32_t mb, std::int32_t vs) {
  if (!c_.s.encoder.trainable || enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
    return;  // a frozen encoder stage has no backward
  }
  NodeId grad = p2p(graph::NodeKind::kRecv, rank_of_stage(vs + 1), tag(mb, vs, true),
                    enc_->boundary_bytes(mb, enc_end_), kNone, c_.p2p_names[3], mb);
  NodeId out = encoder_backward(mb, grad, enc_begin_, enc_end_);
  if (vs > 0) {
    p2p(graph::NodeKind::kSend, rank_of_stage(vs - 1), tag(mb, vs - 1, true),
        enc_->boundary_bytes(mb, enc_begin_), out, c_.p2p_names[2], mb);
  }
}

// The transposed plan of this pipeline rank (synth/schedule/transpose.h): body tasks as the
// body schedule runs them, encoder steps around them.
void StageBuilder::run_transposed() {
  using schedule::Step;
  const auto& names = c_.enc_misc_names;
  const double params = enc_->params();
  for (const Step& st : c_.transpose[static_cast<std::size_t>(stage_)]) {
    const std::int32_t mb = st.microbatch;
    const auto m = static_cast<std::size_t>(std::max(mb, 0));
    switch (st.kind) {
      case Step::kBody:
        run_body_task(st.task);
        break;
      case Step::kParamBroadcast:
        enc_gate_ = dp_collective(
            graph::CollType::kBroadcast,
            c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kPP)],
            params * base::dtype_bytes(c_.s.training.precision), c_.s.training.precision, {},
            names[7], graph::Phase::kForward);
        break;
      case Step::kEncoderForward: {
        bool saved = false;
        for (const Step& later : c_.transpose[static_cast<std::size_t>(stage_)]) {
          saved = saved || (later.kind == Step::kEncoderBackward && later.microbatch == mb);
        }
        features_[m] = encoder_forward(mb, saved, kNone);
        break;
      }
      case Step::kFeatureSend:
        if (features_[m] != kNone) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, EncoderMessage::kFeatures,
                      enc_->feature_bytes(mb), features_[m], names[2]);
        }
        break;
      case Step::kFeatureRecv:
        if (!enc_->mix()[m].groups.empty()) {
          features_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, EncoderMessage::kFeatures,
                                     enc_->feature_bytes(mb), kNone, names[3]);
        }
        break;
      case Step::kInputSend:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, EncoderMessage::kInputs,
                      enc_->input_bytes(mb), enc_gate_, names[4]);
        }
        break;
      case Step::kInputRecv:
        if (!enc_->mix()[m].groups.empty()) {
          enc_input_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, EncoderMessage::kInputs,
                                      enc_->input_bytes(mb), kNone, names[5]);
        }
        break;
      case Step::kEncoderRecompute:
        if (!enc_->mix()[m].groups.empty()) {
          // The recomputed features only rebuild the saved activations: released at once.
          NodeId again = encoder_forward(mb, true, enc_input_[m]);
          marker(names[1], mb, {again}, 0, enc_->feature_bytes(mb));
          encoder_backward(mb, feature_grad_[m]);
          if (enc_input_[m] != kNone) {  // the pixels go once every group's backward is done
            marker(names[10], mb, enc_bwd_ends_, 0, enc_->input_bytes(mb));
          }
        }
        break;
      case Step::kEncoderBackward:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_backward(mb, feature_grad_[m]);
        }
        break;
      case Step::kGradSend:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, EncoderMessage::kFeatureGrads,
                      enc_->feature_bytes(mb), feature_grad_[m], names[6]);
        }
        break;
      case Step::kGradRecv:
        if (!enc_->mix()[m].groups.empty()) {
          feature_grad_[m] =
              encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, EncoderMessage::kFeatureGrads,
                          enc_->feature_bytes(mb), kNone, names[6]);
        }
        break;
      case Step::kGradAllReduce: {
        std::vector<NodeId> deps;
        for (std::size_t k = total_blocks_; k < last_bwd_node_.size(); ++k) {
          for (NodeId id : last_bwd_node_[k]) {
            if (id != kNone) {
              deps.push_back(id);
            }
          }
        }
        enc_allreduce_ = dp_collective(
            graph::CollType::kAllReduce, c_.enc_group_of[static_cast<std::size_t>(rank_)],
            params * 4.0, base::DType::kFP32, deps, names[8], graph::Phase::kBackward);
        break;
      }
    }
  }
}

// The deferred weight-gradient part of one (microbatch, chunk)'s backward.

std::int64_t StageBuilder::encoder_device_of(std::int64_t replica, std::int32_t mb) const {
  std::int64_t n = c_.s.encoder_devices();
  return c_.mesh.size() + (static_cast<std::int64_t>(mb) * c_.s.parallel.dp + replica) % n;
}

// An encoder device: the forwards of its microbatches in order, each sent to the first-stage
// ranks of its replica (every tensor-parallel rank takes its share); for a trained encoder
// then the backwards as the feature gradients come back, a gradient all-reduce over the
// encoder devices, and the optimizer.
RankGraph StageBuilder::build_encoder_device() {
  const Scenario& s = c_.s;
  const auto m = static_cast<std::int32_t>(s.microbatches());
  const bool trained = s.encoder.trainable;
  const parallel::EncoderPrograms& llm_side = *c_.enc;
  struct Job {
    std::int64_t replica;
    std::int32_t mb;
  };
  std::vector<Job> jobs;
  for (std::int32_t j = 0; j < m; ++j) {
    for (std::int64_t d = 0; d < s.parallel.dp; ++d) {
      if (encoder_device_of(d, j) == rank_ &&
          !enc_->mix()[static_cast<std::size_t>(j)].groups.empty()) {
        jobs.push_back({d, j});
      }
    }
  }
  const std::size_t per_group = static_cast<std::size_t>(enc_->layers()) + 2;
  std::size_t total = 0;
  for (const Job& job : jobs) {
    enc_offset_.push_back(total);
    total += enc_->mix()[static_cast<std::size_t>(job.mb)].groups.size() * per_group;
  }
  for (auto* v : {&fwd_base_, &fwd_input_, &bwd_base_, &grad_input_}) {
    v->assign(total, kNone);
  }
  last_bwd_node_.assign(per_group, {});
  enc_saved_.assign(static_cast<std::size_t>(m), 0);
  auto first_stage = [&](std::int64_t replica) {
    std::vector<std::int64_t> ranks;
    for (std::int64_t t = 0; t < s.parallel.tp; ++t) {
      parallel::Coord co;
      co.at[static_cast<std::size_t>(Axis::kTP)] = t;
      co.at[static_cast<std::size_t>(Axis::kDP)] = replica;
      ranks.push_back(c_.mesh.rank(co));
    }
    return ranks;
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    NodeId out =
        encoder_forward(job.mb, trained, kNone, 0, SIZE_MAX, kNone, static_cast<std::int32_t>(i));
    std::vector<NodeId> sent;
    for (std::int64_t dst : first_stage(job.replica)) {
      NodeId id = p2p(graph::NodeKind::kSend, dst, encoder_tag(job.mb, EncoderMessage::kFeatures),
                      llm_side.feature_bytes(job.mb), out, c_.enc_misc_names[2], job.mb);
      g_.nodes[id].mem_free = 0;
      sent.push_back(id);
    }
    marker(c_.enc_misc_names[11], job.mb, sent, 0, enc_->feature_bytes(job.mb));
  }
  std::vector<NodeId> wgrads;
  for (std::size_t i = 0; i < jobs.size() && trained; ++i) {
    const Job& job = jobs[i];
    std::vector<NodeId> grads;
    for (std::int64_t src : first_stage(job.replica)) {
      if (s.parallel.sp || grads.empty()) {  // SP: every shard; else the first TP rank's copy
        grads.push_back(p2p(graph::NodeKind::kRecv, src,
                            encoder_tag(job.mb, EncoderMessage::kFeatureGrads),
                            llm_side.feature_bytes(job.mb), kNone, c_.enc_misc_names[6], job.mb));
      }
    }
    NodeId grad = grads.size() == 1 ? grads[0] : marker(c_.enc_misc_names[1], job.mb, grads, 0, 0);
    encoder_backward(job.mb, grad, 0, SIZE_MAX, static_cast<std::int32_t>(i));
  }
  enc_params_ = enc_->params();
  if (trained) {
    for (const auto& last : last_bwd_node_) {
      for (NodeId id : last) {
        if (id != kNone) {
          wgrads.push_back(id);
        }
      }
    }
    NodeId reduce =
        dp_collective(graph::CollType::kAllReduce, c_.enc_group_of[static_cast<std::size_t>(rank_)],
                      enc_params_ * 4.0, base::DType::kFP32, wgrads, c_.enc_misc_names[8],
                      graph::Phase::kBackward);
    Node opt;
    opt.kind = graph::NodeKind::kCompute;
    opt.op = graph::OpClass::kOptimizer;
    opt.phase = graph::Phase::kOptimizer;
    opt.dtype = base::DType::kFP32;
    opt.bytes = 32.0 * enc_params_;
    opt.flops = 10.0 * enc_params_;
    opt.name = c_.optimizer_name;
    g_.add(opt, {reduce});
  }
  g_.static_memory = static_cast<std::int64_t>(
      enc_params_ * (trained ? 18.0 : base::dtype_bytes(s.training.precision)));
  g_.weight_memory = trained ? static_cast<std::int64_t>(enc_params_ * 2.0) : g_.static_memory;
  g_.grad_memory = trained ? static_cast<std::int64_t>(enc_params_ * 4.0) : 0;
  g_.stage = -1;
  return std::move(g_);
}

}  // namespace tessera::synth::detail
