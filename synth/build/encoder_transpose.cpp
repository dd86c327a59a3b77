// SPDX-License-Identifier: Apache-2.0
// Encoder placement `transpose` (Mpipe): the encoder replicated on every pipeline rank, its
// steps placed around the body schedule's tasks.
#include <algorithm>
#include <vector>

#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

// The transposed plan of this pipeline rank (synth/schedule/transpose.h): body tasks as the
// body schedule runs them, encoder steps around them.
void StageBuilder::run_transposed() {
  using schedule::Step;
  const auto& names = c_.enc_misc_names;
  const double params = enc_->params();
  const std::vector<Step>& plan = c_.transpose[static_cast<std::size_t>(stage_)];
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const Step& st = plan[i];
    const std::int32_t mb = st.microbatch;
    const auto m = static_cast<std::size_t>(std::max(mb, 0));
    switch (st.kind) {
      case Step::kBody:
        // An overlapped pair stays one unit in the plan (transpose.cpp).
        if (st.task.paired && c_.s.overlaps_ep_comm() && i + 1 < plan.size() &&
            plan[i + 1].kind == Step::kBody) {
          run_pair(st.task, plan[i + 1].task);
          ++i;
        } else {
          run_body_task(st.task);
        }
        break;
      case Step::kParamBroadcast:
        enc_gate_ = dp_collective(
            graph::CollType::kBroadcast,
            c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kPP)],
            params * base::dtype_bytes(c_.s.training.precision), c_.s.training.precision, {},
            names.param_broadcast, graph::Phase::kForward);
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
                      enc_->feature_bytes(mb), features_[m], names.send_features);
        }
        break;
      case Step::kFeatureRecv:
        if (!enc_->mix()[m].groups.empty()) {
          features_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, EncoderMessage::kFeatures,
                                     enc_->feature_bytes(mb), kNone, names.recv_features);
        }
        break;
      case Step::kInputSend:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, EncoderMessage::kInputs,
                      enc_->input_bytes(mb), enc_gate_, names.send_input);
        }
        break;
      case Step::kInputRecv:
        if (!enc_->mix()[m].groups.empty()) {
          enc_input_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, EncoderMessage::kInputs,
                                      enc_->input_bytes(mb), kNone, names.recv_input);
        }
        break;
      case Step::kEncoderRecompute:
        if (!enc_->mix()[m].groups.empty()) {
          // The recomputed features only rebuild the saved activations: released at once.
          NodeId again = encoder_forward(mb, true, enc_input_[m]);
          marker(names.join_images, mb, {again}, 0, enc_->feature_bytes(mb));
          encoder_backward(mb, feature_grad_[m]);
          if (enc_input_[m] != kNone) {  // the pixels go once every group's backward is done
            marker(names.release_input, mb, enc_bwd_ends_, 0, enc_->input_bytes(mb));
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
                      enc_->feature_bytes(mb), feature_grad_[m], names.feature_grad_p2p);
        }
        break;
      case Step::kGradRecv:
        if (!enc_->mix()[m].groups.empty()) {
          feature_grad_[m] =
              encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, EncoderMessage::kFeatureGrads,
                          enc_->feature_bytes(mb), kNone, names.feature_grad_p2p);
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
            params * c_.s.training.grad_bytes(), c_.s.training.grad_dtype(), deps,
            names.grad_allreduce, graph::Phase::kBackward);
        break;
      }
    }
  }
}

}  // namespace tessera::synth::detail
