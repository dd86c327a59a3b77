// SPDX-License-Identifier: Apache-2.0
#include "synth/stg/autodiff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/error.h"

namespace tessera::synth::stg {

using graph::OpClass;
using graph::Phase;

namespace {

class Autodiff {
 public:
  explicit Autodiff(Graph& g) : g_(g) {}

  BackwardResult run(const std::vector<TensorId>& outputs, const std::vector<TensorId>& inputs);

 private:
  TensorId combine(TensorId t);
  void backward_of(OpId id);
  void einsum_backward(const Op& op, TensorId dy);
  void fp8_einsum_backward(const Op& op);
  std::pair<TensorId, TensorId> fp8_output_grad(const Op& op);
  void unpermute_backward(const Op& op, TensorId dy);
  TensorId saved_input(TensorId t);
  TensorId kernel(const std::string& name, OpClass cls, std::vector<TensorId> in, Layout out,
                  DType dt, double flops_per_out, double extra_bytes = 0.0);
  void contribute(TensorId t, TensorId grad) { contrib_[t].push_back(grad); }
  void bias_grad(const std::string& name, TensorId g);

  // Data: tensors no op produces that are not block inputs (token ids, pixels); nothing
  // needs their gradient.
  [[nodiscard]] bool is_data(TensorId t) const {
    return g_.tensor(t).producer < 0 && !g_.tensor(t).weight &&
           std::find(inputs_.begin(), inputs_.end(), t) == inputs_.end();
  }

  Graph& g_;
  std::vector<TensorId> inputs_;
  std::map<TensorId, std::vector<TensorId>> contrib_;
  std::vector<std::pair<TensorId, TensorId>> weight_grads_;
};

TensorId Autodiff::kernel(const std::string& name, OpClass cls, std::vector<TensorId> in,
                          Layout out, DType dt, double flops_per_out, double extra_bytes) {
  TensorId y = g_.new_tensor(name, std::move(out), dt);
  Op op;
  op.kind = OpKind::kGradient;
  op.name = name;
  op.phase = Phase::kBackward;
  op.cls = cls;
  double bytes = static_cast<double>(g_.bytes_of(y)) + extra_bytes;
  for (TensorId t : in) {
    bytes += static_cast<double>(g_.bytes_of(t));
  }
  op.in = std::move(in);
  op.out = {y};
  op.flops = flops_per_out * static_cast<double>(g_.elements_of(y));
  op.bytes = bytes;
  g_.append(std::move(op));
  return y;
}

// `name`: the gradient of a bias added to an op's in[0]: in[0]'s gradient `g` summed over the
// tokens, in a kernel of its own (Megatron's local linear layers: grad_output.sum(dim=0); a bias
// fused into GeLU or bias-dropout-add: autograd's sum_to). It leaves the block in the
// bucketed gradient reduction with the other parameters (Block::params).
void Autodiff::bias_grad(const std::string& name, TensorId g) {
  const Layout& l = g_.tensor(g).layout;
  const char last = l.labels.back();
  Layout bl(std::string(1, last));
  if (l.axis_of(last) != kReplicated) {
    bl.sharded(last, static_cast<Axis>(l.axis_of(last)));
  }
  TensorId db = kernel(name, OpClass::kElementwise, {g}, bl, g_.tensor(g).dtype, 0.0);
  g_.mutable_op(g_.tensor(db).producer).flops = static_cast<double>(g_.elements_of(g));
}

// Sums the gradient contributions of `t`, each first brought to t's dual layout (weights
// keep their data-parallel, or for experts expert-data-parallel, partial sum for the bucketed
// reduction).
TensorId Autodiff::combine(TensorId t) {
  auto& parts = contrib_[t];
  if (parts.empty()) {
    return -1;
  }
  const Tensor x = g_.tensor(t);  // copies: the graph grows below
  Layout target = without_partial(x.layout);
  std::vector<TensorId> converted;
  for (TensorId p : parts) {
    if (x.weight) {
      target.partial = static_cast<AxisMask>(g_.tensor(p).layout.partial &
                                             (axis_bit(Axis::kDP) | axis_bit(Axis::kEDP)));
    }
    converted.push_back(g_.convert(p, target, Phase::kBackward));
  }
  TensorId sum = -1;
  for (TensorId c : converted) {
    sum = sum < 0 ? c : g_.add(x.name + ".grad_acc", sum, c);
  }
  parts = {sum};
  return sum;
}

// A saved input for backward. Megatron's sequence-parallel linear layers keep only their
// local shard of an all-gathered input and gather it again in backward; we do the same.
TensorId Autodiff::saved_input(TensorId t) {
  const Tensor x = g_.tensor(t);
  if (x.producer >= 0) {
    const Op p = g_.op(x.producer);
    if (p.kind == OpKind::kCollective && p.coll == graph::CollType::kAllGather &&
        p.phase == Phase::kForward) {
      return g_.convert(p.in[0], x.layout, Phase::kBackward);
    }
  }
  return t;
}

// Whether `target` is `from` with some of its dimensions gathered: the same labels, no
// partial sum, and every dimension either sharded alike or replicated in `target`.
bool only_gathers(const Layout& from, const Layout& target) {
  if (from.labels != target.labels || from.partial != 0 || from == target) {
    return false;
  }
  for (std::size_t d = 0; d < from.labels.size(); ++d) {
    if (from.shard[d] != target.shard[d] && target.shard[d] != kReplicated) {
      return false;
    }
  }
  return true;
}

// The output gradient of an FP8 linear layer, quantized (E5M2; with its column-wise copy
// where the weight gradient needs one). Where its contributions share a layout that only an
// all-gather separates from the output's (a row-parallel layer under sequence parallelism),
// the local shard is quantized and the FP8 copies gathered, as Transformer Engine does
// (docs/fp8.md, "FP8 all-gathers"): the row-wise gather then feeds the input-gradient GEMM
// directly, which its userbuffers overlap. Otherwise the summed gradient is quantized.
std::pair<TensorId, TensorId> Autodiff::fp8_output_grad(const Op& op) {
  const TensorId y = op.out[0];
  const std::vector<TensorId> parts = contrib_[y];
  if (parts.empty()) {
    return {-1, -1};
  }
  const Layout target = without_partial(g_.tensor(y).layout);
  const Layout local = g_.tensor(parts[0]).layout;
  const bool gather = only_gathers(local, target) &&
                      std::all_of(parts.begin(), parts.end(),
                                  [&](TensorId p) { return g_.tensor(p).layout == local; });
  TensorId dy = -1;
  if (gather) {
    for (TensorId p : parts) {
      dy = dy < 0 ? p : g_.add(g_.tensor(y).name + ".grad_acc", dy, p);
    }
  } else {
    dy = combine(y);
  }
  TensorId amax = op.fp8_grad_amax ? g_.fp8_amax(op.name + ".fp8.amax_grad", dy) : -1;
  const char* cast = op.fp8_grad.columnwise ? ".fp8.cast_transpose_grad" : ".fp8.cast_grad";
  auto [row, col] = g_.fp8_cast(op.name + cast, dy, op.fp8_grad, amax);
  if (!gather) {
    return {row, col};
  }
  TensorId row_gathered = g_.convert(row, target, Phase::kBackward);
  return {row_gathered, col == row ? row_gathered : g_.convert(col, target, Phase::kBackward)};
}

// An FP8 linear layer (docs/fp8.md): the output gradient is quantized (fp8_output_grad),
// then dgrad and wgrad run in FP8, wgrad reading the forward input's column-wise copy.
void Autodiff::fp8_einsum_backward(const Op& op) {
  auto [dy8, dy8_col] = fp8_output_grad(op);
  if (dy8 < 0) {
    return;
  }
  EinsumSpec s = parse_einsum(op.spec);
  const DType out = g_.tensor(op.out[0]).dtype;
  TensorId a = op.in[0];
  TensorId b = op.in[1];
  if (!g_.tensor(a).weight && !is_data(a)) {
    contribute(a, g_.einsum_fp8(op.name + ".dgrad", s.c + "," + s.b + "->" + s.a, dy8, b, out));
  }
  // The saved copy is the quantized shard: gathered again like a bf16 input (saved_input).
  TensorId a_saved = op.fp8_col >= 0 ? g_.convert(op.fp8_col, g_.tensor(a).layout, Phase::kBackward)
                                     : saved_input(a);
  contribute(
      b, g_.einsum_fp8(op.name + ".wgrad", s.a + "," + s.c + "->" + s.b, a_saved, dy8_col, out));
}

// MoE combine: each row's gradient is its token's gradient times the row's probability, and
// each probability's gradient the dot product of the saved row with the token's gradient; one
// kernel reads the token gradients once per row, the saved rows and the probabilities.
void Autodiff::unpermute_backward(const Op& op, TensorId dy) {
  const Tensor rows = g_.tensor(op.in[0]);
  const double row_bytes = static_cast<double>(g_.bytes_of(op.in[0]) - g_.bytes_of(dy));
  TensorId drows = kernel(op.name + ".bwd", OpClass::kElementwise, {dy, op.in[0], op.in[1]},
                          rows.layout, rows.dtype, 4.0, row_bytes);
  Layout pl = without_partial(g_.tensor(op.in[1]).layout);
  if (const std::uint8_t a = rows.layout.shard[1]; a != kReplicated) {
    pl.partial = static_cast<AxisMask>(1U << a);  // this rank's experts' probabilities only
  }
  TensorId dprobs = g_.new_tensor(op.name + ".dprobs", pl, DType::kFP32);
  OpId k = g_.tensor(drows).producer;
  g_.mutable_op(k).out.push_back(dprobs);
  g_.mutable_op(k).bytes += static_cast<double>(g_.bytes_of(dprobs));
  g_.set_producer(dprobs, k);
  contribute(op.in[0], drows);
  contribute(op.in[1], dprobs);
}

void Autodiff::einsum_backward(const Op& op, TensorId dy) {
  EinsumSpec s = parse_einsum(op.spec);
  TensorId a = op.in[0];
  TensorId b = op.in[1];
  std::string c = s.c;
  if (!g_.tensor(a).weight && !is_data(a)) {
    TensorId da = g_.einsum(op.name + ".dgrad", c + "," + s.b + "->" + s.a, dy, b);
    contribute(a, da);
  }
  TensorId a_saved = saved_input(a);
  TensorId db = g_.einsum(op.name + (g_.tensor(b).weight ? ".wgrad" : ".dgrad2"),
                          s.a + "," + c + "->" + s.b, a_saved, dy);
  contribute(b, db);
}

void Autodiff::backward_of(OpId id) {
  const Op op = g_.op(id);  // copy: appending ops may reallocate
  const bool view = op.kind == OpKind::kSplit && op.out.size() == 1;
  if (view && g_.tensor(op.out[0]).layout.labels != g_.tensor(op.in[0]).layout.labels) {
    if (TensorId dy = combine(op.out[0]); dy >= 0) {  // a relabelled view: relabelled back
      contribute(op.in[0],
                 g_.relabel(op.name + ".bwd", dy, without_partial(g_.tensor(op.in[0]).layout)));
    }
    return;
  }
  if (op.kind == OpKind::kCollective || view) {  // layout changes: pass raw grads
    for (TensorId p : contrib_[op.out[0]]) {
      contribute(op.in[0], p);
    }
    return;
  }
  if (op.kind == OpKind::kLoss) {  // the root: d(loss)/d(logits) = softmax - onehot
    TensorId probs = op.out[0];
    // Unfused: the softmax is scaled in place (read + write fp32) before the cast back reads it.
    const double extra = op.unfused_loss ? 2.0 * static_cast<double>(g_.bytes_of(probs)) : 0.0;
    TensorId dl = kernel(op.name + ".bwd", OpClass::kLoss, {probs}, g_.tensor(op.in[0]).layout,
                         g_.tensor(op.in[0]).dtype, 2.0, extra);
    contribute(op.in[0], dl);
    return;
  }
  if (op.kind == OpKind::kEinsum && op.fp8) {
    fp8_einsum_backward(op);
    return;
  }
  TensorId dy = combine(op.out[0]);
  if (dy < 0) {
    return;
  }
  const Tensor x0 = g_.tensor(op.in[0]);
  switch (op.kind) {
    case OpKind::kEinsum:
      einsum_backward(op, dy);
      break;
    case OpKind::kNorm: {
      const double eager =
          op.eager ? eager_extra_bytes(op.kind, true, x0.dtype, g_.elements_of(op.in[0])) : 0.0;
      TensorId dx = kernel(op.name + ".bwd", OpClass::kNorm, {op.in[0], dy}, x0.layout, x0.dtype,
                           10.0, eager);
      contribute(op.in[0], dx);
      Layout gl = g_.tensor(op.in[1]).layout;  // gamma: partial over the axes of the rows
      for (char l : x0.layout.labels) {
        if (gl.find(l) < 0 && x0.layout.axis_of(l) != kReplicated) {
          gl.partial = static_cast<AxisMask>(gl.partial | (1u << x0.layout.axis_of(l)));
        }
      }
      TensorId dg = g_.new_tensor(op.name + ".dgamma", gl, DType::kFP32);
      OpId k = g_.tensor(dx).producer;
      g_.mutable_op(k).out.push_back(dg);
      g_.set_producer(dg, k);
      contribute(op.in[1], dg);
      break;
    }
    case OpKind::kGelu:
    case OpKind::kSwiglu: {
      const double eager =
          op.eager ? eager_extra_bytes(op.kind, true, x0.dtype, g_.elements_of(op.out[0])) : 0.0;
      TensorId dx = kernel(op.name + ".bwd", OpClass::kElementwise, {op.in[0], dy}, x0.layout,
                           x0.dtype, op.kind == OpKind::kGelu ? 20.0 : 12.0, eager);
      contribute(op.in[0], dx);
      if (op.bias) {
        bias_grad(op.name + ".bias_grad", dx);
      }
      break;
    }
    case OpKind::kSoftmax:
      contribute(op.in[0], kernel(op.name + ".bwd", OpClass::kSoftmax, {op.out[0], dy}, x0.layout,
                                  x0.dtype, 4.0));
      break;
    case OpKind::kDropout:
      contribute(op.in[0], kernel(op.name + ".bwd", OpClass::kElementwise, {op.out[1], dy},
                                  x0.layout, x0.dtype, 1.0));
      break;
    case OpKind::kDropoutAdd: {
      TensorId dx = kernel(op.name + ".bwd", OpClass::kElementwise, {op.out[1], dy},
                           g_.tensor(dy).layout, x0.dtype, 1.0);
      contribute(op.in[0], dx);
      contribute(op.in[1], dy);
      if (op.bias) {
        bias_grad(op.name + ".bias_grad", dx);
      }
      break;
    }
    case OpKind::kAdd:
      contribute(op.in[0], dy);
      contribute(op.in[1], dy);
      if (op.bias) {
        bias_grad(op.name + ".bias_grad", dy);
      }
      break;
    case OpKind::kBiasAdd:
      contribute(op.in[0], dy);
      bias_grad(op.name + ".bwd", dy);
      break;
    case OpKind::kFp8Cast:  // straight through: the GEMMs' gradients are already bf16
      contribute(op.in[0], dy);
      break;
    case OpKind::kExpand:
      contribute(op.in[0],
                 kernel(op.name + ".bwd", OpClass::kElementwise, {dy}, x0.layout, x0.dtype, 1.0));
      break;
    case OpKind::kRouter:  // through the probabilities; the routing map has no gradient
      contribute(op.in[0], kernel(op.name + ".bwd", OpClass::kSoftmax, {op.out[0], dy}, x0.layout,
                                  x0.dtype, 4.0));
      break;
    case OpKind::kPermute: {  // the rows' gradients scattered back and summed per token
      Layout dl = without_partial(x0.layout);
      if (const std::uint8_t a = g_.tensor(op.out[0]).layout.shard[1]; a != kReplicated) {
        dl.partial = static_cast<AxisMask>(1U << a);  // this rank's experts' rows only
      }
      contribute(op.in[0],
                 kernel(op.name + ".bwd", OpClass::kElementwise, {dy}, dl, x0.dtype, 1.0));
      break;
    }
    case OpKind::kUnpermute:
      unpermute_backward(op, dy);
      break;
    case OpKind::kConcat: {  // the gradient's slices, views of one buffer
      std::vector<Layout> parts;
      for (TensorId p : op.in) {
        parts.push_back(g_.tensor(p).layout);
      }
      std::vector<TensorId> grads = g_.split(op.name + ".bwd", dy, parts);
      for (std::size_t i = 0; i < grads.size(); ++i) {
        contribute(op.in[i], grads[i]);
      }
      break;
    }
    case OpKind::kAttention: {
      // FlashAttention backward: recompute QK^T, then dV, dP, dQ, dK: 5 matmuls vs 2.
      // Gathered keys and values are gathered again (context parallelism keeps its own chunk);
      // with a rank's share of the queries their gradients are partial sums.
      const TensorId keys = saved_input(op.in[1]);
      const TensorId values = saved_input(op.in[2]);
      TensorId dq = kernel(op.name + ".bwd", OpClass::kAttention,
                           {op.in[0], keys, values, op.out[0], dy}, x0.layout, x0.dtype, 0.0);
      Op& k = g_.mutable_op(g_.tensor(dq).producer);
      k.flops = 2.5 * op.flops;
      k.model_flops = 2.0 * op.model_flops;
      k.gemm = op.gemm;
      k.causal = op.causal;
      k.ring = op.ring;
      k.ring_size = op.ring_size;
      Layout lk = g_.tensor(op.in[1]).layout;
      Layout lv = g_.tensor(op.in[2]).layout;
      lk.partial = lv.partial = op.query_share;
      TensorId dk = g_.new_tensor(op.name + ".dk", lk, x0.dtype);
      TensorId dv = g_.new_tensor(op.name + ".dv", lv, x0.dtype);
      k.out.push_back(dk);
      k.out.push_back(dv);
      g_.set_producer(dk, g_.tensor(dq).producer);
      g_.set_producer(dv, g_.tensor(dq).producer);
      k.bytes += static_cast<double>(g_.bytes_of(dk) + g_.bytes_of(dv));
      contribute(op.in[0], dq);
      contribute(op.in[1], dk);
      contribute(op.in[2], dv);
      break;
    }
    case OpKind::kEmbedding: {
      // Scatter-add of the output gradient into the (fp32) table gradient rows.
      Layout tl = g_.tensor(op.in[1]).layout;
      tl.partial = axis_bit(Axis::kDP);
      if (g_.tensor(dy).layout.axis_of('b') == kReplicated) {
        tl.partial = 0;
      }
      TensorId dt = kernel(op.name + ".bwd", OpClass::kEmbedding, {dy}, tl, DType::kFP32, 0.0);
      Op& k = g_.mutable_op(g_.tensor(dt).producer);
      k.bytes = static_cast<double>(g_.bytes_of(dy)) * 5.0;  // read dy, fp32 rows read+write
      contribute(op.in[1], dt);
      break;
    }
    case OpKind::kSplit: {  // views of one buffer: their gradients fill one buffer
      std::vector<TensorId> grads;
      for (TensorId o : op.out) {
        TensorId d = combine(o);
        if (d >= 0) {
          grads.push_back(d);
        }
      }
      if (grads.empty()) {
        break;
      }
      TensorId dx = g_.new_tensor(op.name + ".grad", x0.layout, x0.dtype);
      Op cat;
      cat.kind = OpKind::kSplit;
      cat.name = op.name + ".concat";
      cat.in = grads;
      cat.out = {dx};
      cat.phase = Phase::kBackward;
      g_.append(std::move(cat));
      contribute(op.in[0], dx);
      break;
    }
    default:
      throw base::InternalError(fmt::format("no backward rule for op {}", op.name));
  }
}

BackwardResult Autodiff::run(const std::vector<TensorId>& outputs,
                             const std::vector<TensorId>& inputs) {
  BackwardResult r;
  inputs_ = inputs;
  auto n_fwd = static_cast<OpId>(g_.ops().size());
  r.first_op = n_fwd;
  g_.set_phase(Phase::kBackward);
  for (TensorId y : outputs) {
    TensorId dy = g_.input(g_.tensor(y).name + ".grad", without_partial(g_.tensor(y).layout),
                           g_.tensor(y).dtype);
    r.grad_inputs.push_back(dy);
    contribute(y, dy);
  }
  for (OpId id = n_fwd - 1; id >= 0; --id) {
    if (g_.op(id).kind == OpKind::kSplit && g_.op(id).out.size() > 1) {
      backward_of(id);
      continue;
    }
    bool has_grad = g_.op(id).kind == OpKind::kLoss;
    for (TensorId o : g_.op(id).out) {
      has_grad = has_grad || !contrib_[o].empty();
    }
    if (has_grad) {
      backward_of(id);
    }
  }
  for (TensorId x : inputs) {
    TensorId dx = combine(x);
    if (dx >= 0) {
      r.input_grads.emplace_back(x, dx);
    }
  }
  for (std::size_t t = 0; t < g_.tensors().size(); ++t) {
    auto id = static_cast<TensorId>(t);
    if (g_.tensor(id).weight) {
      TensorId dw = combine(id);
      if (dw >= 0) {
        r.weight_grads.emplace_back(id, dw);
      }
    }
  }
  g_.set_phase(Phase::kForward);
  return r;
}

}  // namespace

BackwardResult derive_backward(Graph& g, const std::vector<TensorId>& outputs,
                               const std::vector<TensorId>& inputs) {
  return Autodiff(g).run(outputs, inputs);
}

}  // namespace tessera::synth::stg
