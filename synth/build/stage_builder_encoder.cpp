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
  return outs.size() == 1 ? outs[0] : marker(c_.enc_misc_names.join_images, mb, outs, 0, 0);
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
  return outs.size() == 1 ? outs[0] : marker(c_.enc_misc_names.join_images, mb, outs, 0, 0);
}

// The first LLM stage's gradient of a trainable encoder's features (dL/dfeatures): copied
// out of the first layer's input gradient and handed to the encoder, here or on its stage or
// device.
void StageBuilder::feature_grad_out(std::int32_t mb, std::int32_t vs, NodeId grad) {
  if (enc_ == nullptr || !c_.s.encoder.trainable ||
      features_[static_cast<std::size_t>(mb)] == kNone) {
    return;
  }
  feature_grad_[static_cast<std::size_t>(mb)] =
      marker(c_.enc_misc_names.feature_grad, mb, {grad}, enc_->feature_bytes(mb), 0);
  if (inline_encoder_) {
    encoder_backward(mb, feature_grad_[static_cast<std::size_t>(mb)]);
  }
  if (enc_stages_ > 0) {
    p2p(graph::NodeKind::kSend, rank_of_stage(vs - 1), tag(mb, vs - 1, true),
        enc_->feature_bytes(mb), feature_grad_[static_cast<std::size_t>(mb)],
        c_.enc_misc_names.feature_grad_p2p, mb);
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
        feature_grad_[static_cast<std::size_t>(mb)], c_.enc_misc_names.feature_grad_p2p, mb);
  }
}

}  // namespace tessera::synth::detail
