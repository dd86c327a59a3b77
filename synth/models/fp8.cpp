// SPDX-License-Identifier: Apache-2.0
#include "synth/models/fp8.h"

namespace tessera::synth::models {

using stg::TensorId;

namespace {

constexpr double kTile = 128.0;      // blockwise: 1x128 activation tiles, 128x128 weights
constexpr double kScaleBytes = 4.0;  // fp32 scales
constexpr double kMxBlock = 32.0;    // MXFP8: one 1-byte E8M0 scale per 32 elements
constexpr double kQuantizersPerGemm = 5.0;
constexpr double kHistoryLength = 1.0;  // Megatron-Core's fp8_amax_history_len default

}  // namespace

stg::Fp8CastSpec Fp8Plan::activation() const {
  if (recipe == Fp8Recipe::kMxfp8) {  // row- and column-wise copies, a scale per 32 elements
    return {true, 1.0 / kMxBlock};
  }
  bool block = recipe == Fp8Recipe::kBlockwise;
  return {transpose || block, block ? kScaleBytes / kTile : 0.0};
}

double Fp8Plan::weight_scale_bytes() const {
  switch (recipe) {
    case Fp8Recipe::kBlockwise:
      return kScaleBytes / (kTile * kTile);
    case Fp8Recipe::kMxfp8:
      return 1.0 / kMxBlock;
    default:
      return 0.0;
  }
}

double Fp8Plan::gathered_weight_bytes() const {
  return 1.0 + weight_scale_bytes();
}

double Fp8Plan::transpose_after_gather_bytes(double weight_elements) const {
  return weight_copies() > 1 ? 2.0 * weight_elements : 0.0;
}

double Fp8Plan::meta_bytes_per_gemm() const {
  switch (recipe) {
    case Fp8Recipe::kDelayed:
      return kQuantizersPerGemm * (1.0 + kHistoryLength) * kScaleBytes;
    case Fp8Recipe::kTensorwise:
      return kQuantizersPerGemm * kScaleBytes;
    case Fp8Recipe::kNone:
    case Fp8Recipe::kBlockwise:  // the block scales are counted with the copies
    case Fp8Recipe::kMxfp8:
      return 0.0;
  }
  return 0.0;
}

Fp8Plan fp8_plan(const Scenario& s) {
  Fp8Plan p;
  p.recipe = s.training.fp8;
  if (p.on()) {
    p.transpose = hardware_profile(s).fp8_transpose;
    // MXFP8's row- and column-wise copies cannot be made from one another: Megatron gathers
    // its parameters in bf16 (into the gradient buffer) and quantizes them as without the key.
    p.param_gather = s.training.fp8_param_gather && p.recipe != Fp8Recipe::kMxfp8;
  }
  return p;
}

TensorId linear(stg::Graph& g, const Fp8Plan& plan, const std::string& name,
                const std::string& spec, TensorId x, TensorId w) {
  if (!plan.on()) {
    return g.einsum(name, spec, x, w);
  }
  const stg::Fp8CastSpec cast = plan.activation();
  TensorId amax = plan.current_scaling() ? g.fp8_amax(name + ".fp8.amax", x) : -1;
  auto [row, col] =
      g.fp8_cast(name + (cast.columnwise ? ".fp8.cast_transpose" : ".fp8.cast"), x, cast, amax);
  TensorId y = g.einsum_fp8(name, spec, row, w, g.tensor(x).dtype);
  stg::Op& op = g.mutable_op(g.tensor(y).producer);
  op.fp8_col = col;
  op.fp8_grad = cast;
  op.fp8_grad_amax = plan.current_scaling();
  return y;
}

double fp8_weight_elements(const stg::Graph& g, bool experts_only) {
  double n = 0.0;
  for (const stg::Op& op : g.ops()) {
    if (op.fp8 && op.phase == graph::Phase::kForward && g.tensor(op.in[1]).weight &&
        (g.tensor(op.in[1]).expert || !experts_only)) {
      n += static_cast<double>(g.elements_of(op.in[1]));
    }
  }
  return n;
}

int fp8_gemms(const stg::Graph& g) {
  int n = 0;
  for (const stg::Op& op : g.ops()) {
    n += op.fp8 && op.phase == graph::Phase::kForward ? 1 : 0;
  }
  return n;
}

double fp8_static_bytes(const Fp8Plan& plan, double weight_elements, int gemms) {
  if (!plan.on()) {
    return 0.0;
  }
  return weight_elements * plan.weight_copies() * (1.0 + plan.weight_scale_bytes()) +
         plan.meta_bytes_per_gemm() * gemms;
}

double fp8_weight_cast_bytes(const Fp8Plan& plan, double weight_elements) {
  if (!plan.on()) {
    return 0.0;
  }
  double read = 2.0 * weight_elements * (plan.current_scaling() ? 2.0 : 1.0);
  return read + weight_elements * plan.weight_copies() * (1.0 + plan.weight_scale_bytes());
}

}  // namespace tessera::synth::models
