// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/attention_model.h"

#include <fmt/format.h>

#include <cmath>

#include "base/error.h"

namespace tessera::hw {

namespace {

double interpolate(const std::vector<AttentionModel::Point>& points, std::int64_t head_dim) {
  if (points.empty()) {
    throw base::InternalError("attention model without plateau points");
  }
  if (head_dim <= points.front().head_dim) {
    return points.front().fraction;
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& lo = points[i - 1];
    const auto& hi = points[i];
    if (head_dim <= hi.head_dim) {
      double t = std::log2(static_cast<double>(head_dim) / lo.head_dim) /
                 std::log2(static_cast<double>(hi.head_dim) / lo.head_dim);
      return lo.fraction + t * (hi.fraction - lo.fraction);
    }
  }
  return points.back().fraction;
}

}  // namespace

double attention_plateau(const AttentionModel& a, AttentionPass pass, std::int64_t head_dim) {
  return interpolate(pass == AttentionPass::kForward ? a.forward : a.backward, head_dim);
}

double attention_fraction(const AttentionModel& a, AttentionPass pass, const AttentionShape& s) {
  if (s.seq < 1 || s.head_dim < 1) {
    throw base::InternalError(
        fmt::format("attention model: bad shape seq={} head_dim={}", s.seq, s.head_dim));
  }
  double seq = static_cast<double>(s.seq) / (s.causal ? a.causal_seq_factor : 1.0);
  double half = pass == AttentionPass::kForward ? a.seq_half_forward : a.seq_half_backward;
  return attention_plateau(a, pass, s.head_dim) * seq / (seq + half);
}

double attention_fraction_fwd_bwd(const AttentionModel& a) {
  double fwd = attention_plateau(a, AttentionPass::kForward, 128);
  double bwd = attention_plateau(a, AttentionPass::kBackward, 128);
  return 3.5 / (1.0 / fwd + 2.5 / bwd);
}

}  // namespace tessera::hw
