// SPDX-License-Identifier: Apache-2.0
// Achieved fraction of dense peak of a fused (flash) attention kernel by direction, head dim,
// sequence length and causality, from the profile's AttentionModel.
#pragma once

#include <cstdint>

#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

enum class AttentionPass : unsigned char { kForward, kBackward };

struct AttentionShape {
  std::int64_t seq = 1;  // keys per query row (the kv sequence length)
  std::int64_t head_dim = 128;
  bool causal = false;
};

// Contract: seq, head_dim >= 1 (a base::InternalError otherwise). Returns
//   plateau(pass, head_dim) * S / (S + seq_half(pass)),  S = seq / (causal ? causal_seq_factor : 1)
// where plateau interpolates linearly in log2(head_dim) between the listed head dims and holds
// the end values outside them.
double attention_fraction(const AttentionModel& a, AttentionPass pass, const AttentionShape& s);

// The plateau alone (long sequences) for `pass` at `head_dim`.
double attention_plateau(const AttentionModel& a, AttentionPass pass, std::int64_t head_dim);

// Forward + backward at head dim 128, long sequences, time-weighted (backward = 2.5x the
// FLOPs): 3.5 / (1/fwd + 2.5/bwd). Profile::attention_fraction.
double attention_fraction_fwd_bwd(const AttentionModel& a);

}  // namespace tessera::hw
