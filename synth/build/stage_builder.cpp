// SPDX-License-Identifier: Apache-2.0
#include "synth/build/stage_builder.h"

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
  NodeId id = dep == kNone ? g_.add(n) : g_.add(n, {dep});
  if (kind == graph::NodeKind::kSend &&
      (name == c_.p2p_names.send_activation || name == c_.p2p_names.send_grad)) {
    hold_send(id);
  }
  return id;
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

// What crosses into virtual stage `vs` (and its gradient, back): a decoder layer's stream, or
// after multi-token prediction on a stage of its own, [x; its stream].
std::int64_t StageBuilder::boundary_bytes(std::int32_t vs) const {
  const std::int64_t apart = c_.s.parallel.mtp_stage_apart();
  const bool after_mtp = apart >= 0 && place_->stage_in_pipe(vs) - enc_stages_ > apart;
  return after_mtp ? c_.progs.mtp->out_bytes : c_.progs.layer.out_bytes;
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
  const std::size_t mc = static_cast<std::size_t>(mb) * chunks_.size();
  NodeId prev = kNone;
  const std::int32_t before = place_->prev_stage(vs);
  if (vs == llm_first_ && enc_stages_ > 0) {  // the features from the last encoder stage
    if (!enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
      features_[static_cast<std::size_t>(mb)] =
          p2p(graph::NodeKind::kRecv, rank_of_stage(before), tag(mb, vs, false),
              enc_->feature_bytes(mb), kNone, c_.enc_misc_names.recv_features, mb);
    }
  } else if (before >= 0) {
    std::int64_t src = rank_of_stage(before);
    prev = src == rank_ ? fwd_out_[mc + static_cast<std::size_t>(place_->chunk_of(before))]
                        : p2p(graph::NodeKind::kRecv, src, tag(mb, vs, false), boundary_bytes(vs),
                              kNone, c_.p2p_names.recv_activation, mb);
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
            c_.enc_misc_names.recv_features, mb);
  }
  const bool cast_weights =
      fp8_cast_done_[static_cast<std::size_t>(chunk)] == 0 && !casts_gathered_weights();
  fp8_cast_done_[static_cast<std::size_t>(chunk)] = 1;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    std::size_t sl = slot(mb, chunk, k);
    if (cast_weights) {
      fp8_weight_cast(blocks[k], mb, prev);
    }
    fwd_input_[sl] = prev;
    const std::size_t unit = offset_[static_cast<std::size_t>(chunk)] + k;
    wait_params(unit);
    unit_before(unit, UnitPart::kForward, mb);
    NodeId base = instantiate(blocks[k], mb, 0, blocks[k].prog->n_fwd, prev, kNone, sl, unit);
    unit_forward_done(unit);
    fwd_base_[sl] = base;
    if (blocks[k].prog->fwd_out >= 0) {
      prev = base + static_cast<NodeId>(blocks[k].prog->fwd_out);
    }
    if (vs == llm_first_ && k == 0 && enc_ != nullptr && features_[m] != kNone) {
      // The image features take their places in the embedded sequence.
      prev = marker(c_.enc_misc_names.merge_features, mb, {prev, features_[m]}, 0,
                    enc_->feature_bytes(mb));
    }
  }
  fwd_out_[mc + static_cast<std::size_t>(chunk)] = prev;
  fp8_amax_update(mb, chunk, graph::Phase::kForward, prev);
  const std::int32_t after = place_->next_stage(vs);
  if (after >= 0 && rank_of_stage(after) != rank_) {
    p2p(graph::NodeKind::kSend, rank_of_stage(after), tag(mb, after, false), boundary_bytes(after),
        prev, c_.p2p_names.send_activation, mb);
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
  const std::size_t mc = static_cast<std::size_t>(mb) * chunks_.size();
  NodeId grad = kNone;
  const std::int32_t after = place_->next_stage(vs);
  if (after >= 0) {
    std::int64_t src = rank_of_stage(after);
    grad = src == rank_ ? bwd_out_[mc + static_cast<std::size_t>(place_->chunk_of(after))]
                        : p2p(graph::NodeKind::kRecv, src, tag(mb, vs, true), boundary_bytes(after),
                              kNone, c_.p2p_names.recv_grad, mb);
  }
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  for (std::size_t k = blocks.size(); k-- > 0;) {
    const BlockProgram& p = *blocks[k].prog;
    std::size_t sl = slot(mb, chunk, k);
    std::int32_t end =
        kind == schedule::Task::kBackward ? static_cast<std::int32_t>(p.ops.size()) : p.w_begin;
    grad_input_[sl] = grad;
    const std::size_t unit = offset_[static_cast<std::size_t>(chunk)] + k;
    unit_before(unit,
                kind == schedule::Task::kBackward ? UnitPart::kBackward : UnitPart::kInputGrad, mb);
    NodeId base = instantiate(blocks[k], mb, p.n_fwd, end, fwd_input_[sl], grad, sl, unit);
    unit_backward_done(unit, kind == schedule::Task::kBackward);
    bwd_base_[sl] = base;
    if (p.bwd_out >= 0) {
      grad = base + static_cast<NodeId>(p.bwd_out - p.n_fwd);
    }
  }
  bwd_out_[mc + static_cast<std::size_t>(chunk)] = grad;
  fp8_amax_update(mb, chunk, graph::Phase::kBackward, grad);
  if (vs == llm_first_) {
    feature_grad_out(mb, vs, grad);
  }
  const std::int32_t before = place_->prev_stage(vs);
  if (before >= 0 && before >= enc_stages_ && rank_of_stage(before) != rank_) {
    p2p(graph::NodeKind::kSend, rank_of_stage(before), tag(mb, before, true), boundary_bytes(vs),
        grad, c_.p2p_names.send_grad, mb);
  }
}

// The deferred weight-gradient part of one (microbatch, chunk)'s backward (ZB-H1, ZB-H2).
void StageBuilder::weight(std::int32_t mb, std::int32_t chunk) {
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  for (std::size_t k = blocks.size(); k-- > 0;) {
    const BlockProgram& p = *blocks[k].prog;
    std::size_t sl = slot(mb, chunk, k);
    const std::size_t unit = offset_[static_cast<std::size_t>(chunk)] + k;
    unit_before(unit, UnitPart::kWeightGrad, mb);
    instantiate(blocks[k], mb, p.w_begin, static_cast<std::int32_t>(p.ops.size()), fwd_input_[sl],
                grad_input_[sl], sl, unit);
    unit_backward_done(unit, true);
  }
}

RankGraph StageBuilder::build() {
  if (rank_ >= c_.mesh.size()) {
    return build_encoder_device();
  }
  const Scenario& s = c_.s;
  stages_ = static_cast<std::int32_t>(s.parallel.pp);
  stage_ = static_cast<std::int32_t>(c_.mesh.coord(rank_)[Axis::kPP]);
  place_blocks();
  auto m = static_cast<std::int32_t>(s.microbatches());
  allocate_slots(m);
  double params = 0.0;
  for (const auto& b : blocks_) {
    params += b.prog->params;
  }
  param_gathers();
  if (enc_ != nullptr) {
    allocate_encoder_slots(m);
  }
  if (s.schedule.encoder == EncoderPlacement::kTranspose) {
    run_transposed();
  } else {
    const std::vector<schedule::Task> order =
        schedule::stage_order(s.step_schedule(), stages_, stage_, m);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].paired && s.overlaps_ep_comm() && i + 1 < order.size()) {
        run_pair(order[i], order[i + 1]);
        ++i;
      } else {
        run_body_task(order[i]);
      }
    }
  }
  if (enc_ != nullptr) {
    count_encoder_params();
  }
  if (holds_encoder_grads()) {
    params += enc_params_;
  }
  gradient_reduction(params);
  account_static_memory(params);
  interleave_pairs(g_, pairs_);
  g_.stage = stage_;
  return std::move(g_);
}

void StageBuilder::run_body_task(const schedule::Task& t) {
  wait_sends();
  run_task(t);
}

void StageBuilder::run_task(const schedule::Task& t) {
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

}  // namespace tessera::synth::detail
