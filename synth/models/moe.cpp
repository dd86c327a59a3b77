// SPDX-License-Identifier: Apache-2.0
// The mixture-of-experts MLP of a decoder layer (docs/moe.md), as Megatron-Core's MoELayer
// with the alltoall token dispatcher runs it without expert parallelism: router, permute,
// the experts as grouped GEMMs (one [rows x h] GEMM per expert, sharded over tp like a dense
// MLP), unpermute, and the shared experts beside them. The sequence-parallel all-gather of
// the permuted rows and the reduce-scatter of the experts' output come from the layouts.
#include <algorithm>
#include <cmath>

#include "synth/models/layer_parts.h"
#include "synth/models/transformer.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::OpKind;
using stg::TensorId;

std::int64_t expert_rows(const Scenario& s) {
  const MoeConfig& m = s.model.moe;
  const std::int64_t tp = s.parallel.tp;
  // A rank holds s/tp tokens of each sequence (sequence parallelism) and routes k copies of
  // each; balanced, every expert gets an equal share, rounded up.
  const std::int64_t routed = s.training.seq_len / tp * m.top_k;
  std::int64_t rows = (routed + m.experts - 1) / m.experts;
  if (m.capacity_factor > 0.0) {  // Megatron's get_capacity: ceil(tokens x k x CF / E)
    const double cap =
        std::ceil(static_cast<double>(routed) * m.capacity_factor / static_cast<double>(m.experts));
    rows = std::min(rows, static_cast<std::int64_t>(std::min(cap, static_cast<double>(rows))));
  }
  return rows * tp;
}

namespace {

// The routed experts on the dispatched rows [b, x, r, h]: fc1 and fc2 as batched GEMMs over
// the expert dimension, the hidden width sharded over tp.
TensorId experts(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId rows) {
  const base::DType dt = s.training.precision;
  const bool gelu = s.model.activation == Activation::kGelu;
  const char w = gelu ? 'u' : 'w';  // fc1's width: f_e, or gate and up (2 f_e) with SwiGLU
  TensorId w1 =
      g.weight("moe.experts.fc1.weight", sharded(std::string("xh") + w, w, Axis::kTP), dt);
  TensorId h1 =
      linear(g, fp8, "moe.experts.fc1", std::string("bxrh,xh") + w + "->bxr" + w, rows, w1);
  TensorId act = gelu ? g.unary(OpKind::kGelu, "moe.experts.gelu", h1)
                      : g.swiglu("moe.experts.swiglu", h1, 'u');
  TensorId w2 = g.weight("moe.experts.fc2.weight", sharded("xuh", 'u', Axis::kTP), dt);
  return linear(g, fp8, "moe.experts.fc2", "bxru,xuh->bxrh", act, w2);
}

}  // namespace

TensorId moe_mlp(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x) {
  const MoeConfig& m = s.model.moe;
  TensorId ln = norm(g, s, "mlp.norm", x);
  TensorId wr = g.weight("moe.router.weight", Layout("hx"), s.training.precision);
  TensorId logits = g.einsum("moe.router", "bsh,hx->bsx", ln, wr);
  auto [probs, map] = g.route("moe.route", logits);
  TensorId rows = g.permute("moe.permute", ln, map);
  TensorId y = g.unpermute("moe.unpermute", experts(g, s, fp8, rows), probs, g.tensor(x).layout);
  if (m.shared_experts > 0) {
    y = g.add("moe.shared_add", y, mlp_branch(g, s, fp8, ln, {"moe.shared", 'y', 'z', false}));
  }
  return g.dropout_add("mlp.residual", y, x, s.model.dropout > 0.0);
}

}  // namespace tessera::synth::models
