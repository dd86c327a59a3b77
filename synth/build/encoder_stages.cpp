// SPDX-License-Identifier: Apache-2.0
// Encoder placement `stages`: the encoder as the first k pipeline stages.
#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

// The encoder as its own pipeline stage(s): this rank's blocks of every image group, one
// message per microbatch between stages (all groups' activations together).
void StageBuilder::encoder_stage_forward(std::int32_t mb, std::int32_t vs) {
  if (enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
    return;
  }
  NodeId input = kNone;
  if (vs > 0) {
    input = p2p(graph::NodeKind::kRecv, rank_of_stage(vs - 1), tag(mb, vs, false),
                enc_->boundary_bytes(mb, enc_begin_), kNone, c_.p2p_names.recv_activation, mb);
  }
  NodeId out = encoder_forward(mb, c_.s.encoder.trainable, kNone, enc_begin_, enc_end_, input);
  p2p(graph::NodeKind::kSend, rank_of_stage(vs + 1), tag(mb, vs + 1, false),
      enc_->boundary_bytes(mb, enc_end_), out,
      vs + 1 == enc_stages_ ? c_.enc_misc_names.send_features : c_.p2p_names.send_activation, mb);
}

void StageBuilder::encoder_stage_backward(std::int32_t mb, std::int32_t vs) {
  if (!c_.s.encoder.trainable || enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
    return;  // a frozen encoder stage has no backward
  }
  NodeId grad = p2p(graph::NodeKind::kRecv, rank_of_stage(vs + 1), tag(mb, vs, true),
                    enc_->boundary_bytes(mb, enc_end_), kNone, c_.p2p_names.recv_grad, mb);
  NodeId out = encoder_backward(mb, grad, enc_begin_, enc_end_);
  if (vs > 0) {
    p2p(graph::NodeKind::kSend, rank_of_stage(vs - 1), tag(mb, vs - 1, true),
        enc_->boundary_bytes(mb, enc_begin_), out, c_.p2p_names.send_grad, mb);
  }
}

}  // namespace tessera::synth::detail
