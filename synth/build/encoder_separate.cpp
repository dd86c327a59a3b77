// SPDX-License-Identifier: Apache-2.0
// Encoder placement `separate` (DistTrain-style): the encoder on devices of its own.
#include <algorithm>

#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

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
                      llm_side.feature_bytes(job.mb), out, c_.enc_misc_names.send_features, job.mb);
      g_.nodes[id].mem_free = 0;
      sent.push_back(id);
    }
    marker(c_.enc_misc_names.release_features, job.mb, sent, 0, enc_->feature_bytes(job.mb));
  }
  std::vector<NodeId> wgrads;
  for (std::size_t i = 0; i < jobs.size() && trained; ++i) {
    const Job& job = jobs[i];
    std::vector<NodeId> grads;
    for (std::int64_t src : first_stage(job.replica)) {
      if (s.parallel.sp || grads.empty()) {  // SP: every shard; else the first TP rank's copy
        grads.push_back(
            p2p(graph::NodeKind::kRecv, src, encoder_tag(job.mb, EncoderMessage::kFeatureGrads),
                llm_side.feature_bytes(job.mb), kNone, c_.enc_misc_names.feature_grad_p2p, job.mb));
      }
    }
    NodeId grad =
        grads.size() == 1 ? grads[0] : marker(c_.enc_misc_names.join_images, job.mb, grads, 0, 0);
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
                      enc_params_ * s.training.grad_bytes(), s.training.grad_dtype(), wgrads,
                      c_.enc_misc_names.grad_allreduce, graph::Phase::kBackward);
    add_optimizer_step(g_, s.training, c_.optimizer_names, enc_params_, enc_params_, {reduce});
  }
  g_.static_memory =
      static_cast<std::int64_t>(enc_params_ * (trained ? s.training.static_bytes_per_param(0, 1.0)
                                                       : base::dtype_bytes(s.training.precision)));
  g_.weight_memory = trained ? static_cast<std::int64_t>(enc_params_ * 2.0) : g_.static_memory;
  g_.grad_memory = trained ? static_cast<std::int64_t>(enc_params_ * s.training.grad_bytes()) : 0;
  g_.stage = -1;
  return std::move(g_);
}

}  // namespace tessera::synth::detail
