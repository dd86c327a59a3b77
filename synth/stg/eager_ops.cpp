// SPDX-License-Identifier: Apache-2.0
// PyTorch eager mode's norms and SwiGLU: what the chain of single-op kernels reads and writes
// beyond the one fused kernel (Transformer Engine's, or torch.compile's). The chains are the
// reference PyTorch formulations (docs/eager_elementwise.md):
//   RMSNorm  y = (x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x) * w
//   SwiGLU   y = silu(a) * b
// and autograd's backward of each. X is the activation's element size; intermediates are fp32.
#include "base/error.h"
#include "synth/stg/graph.h"

namespace tessera::synth::stg {

namespace {

constexpr double kF32 = 4.0;

// Per element of x. Forward: cast (X + 4), pow (4 + 4), mean (4), x * rstd (4 + 4),
// type_as (4 + X), * w (X + X): 4X + 7*4, of which the fused kernel's x and y are 2X.
// Backward: * w's two gradients (2X + 2X), the cast (X + 4), x * rstd's two (4 + 4, 4 + 4),
// pow's (4 + 4), the sum of the two paths into x (4 + 4 + 4), the cast back (4 + X):
// 6X + 12*4, of which the fused kernel's x, dy and dx are 3X.
double norm_extra(bool backward, double x) {
  return backward ? 3.0 * x + 12.0 * kF32 : 2.0 * x + 7.0 * kF32;
}

// Per element of y. Forward: silu (X + X), * b (X + X + X): 5X, fused 3X. Backward: the
// product's two gradients (3X each) and silu's (3X): 9X, fused (a, b, dy, da, db) 5X.
double swiglu_extra(bool backward, double x) {
  return backward ? 4.0 * x : 2.0 * x;
}

}  // namespace

double eager_extra_bytes(OpKind kind, bool backward, DType dtype, std::int64_t elements) {
  const auto x = static_cast<double>(base::dtype_bytes(dtype));
  const auto n = static_cast<double>(elements);
  switch (kind) {
    case OpKind::kNorm:
      return n * norm_extra(backward, x);
    case OpKind::kSwiglu:
      return n * swiglu_extra(backward, x);
    default:
      throw base::InternalError("eager_extra_bytes: only norms and SwiGLU run as eager chains");
  }
}

}  // namespace tessera::synth::stg
