// SPDX-License-Identifier: Apache-2.0
// The non-einsum operations of the tensor graph, each with its layout rule and its FLOP and
// byte rule (the kernel's reads and writes of HBM, from local shapes and dtypes).
#include <fmt/format.h>

#include "base/error.h"
#include "synth/stg/graph.h"

namespace tessera::synth::stg {

using graph::OpClass;

namespace {

// The layout an op that needs whole `label` rows (a norm's hidden dim, a softmax's keys)
// accepts: that dimension gathered, no partial sums.
Layout whole(Layout l, char label) {
  l.partial = 0;
  if (label != 0) {
    int i = l.find(label);
    if (i < 0) {
      throw base::InternalError(fmt::format("layout {} has no '{}'", l.labels, label));
    }
    l.shard[static_cast<std::size_t>(i)] = kReplicated;
  }
  return l;
}

}  // namespace

Op Graph::streaming_op(OpKind kind, const std::string& name, std::vector<TensorId> in,
                       std::vector<TensorId> out, OpClass cls, double flops) const {
  Op op;
  op.kind = kind;
  op.name = name;
  op.phase = phase_;
  op.cls = cls;
  op.flops = flops;
  for (TensorId t : in) {
    op.bytes += static_cast<double>(bytes_of(t));
  }
  for (TensorId t : out) {
    op.bytes += static_cast<double>(bytes_of(t));
  }
  op.in = std::move(in);
  op.out = std::move(out);
  return op;
}

TensorId Graph::norm(const std::string& name, TensorId x, TensorId gamma, char normalized,
                     bool eager) {
  x = convert(x, whole(tensor(x).layout, normalized), phase_);
  TensorId y = new_tensor(name, tensor(x).layout, tensor(x).dtype);
  // Mean, variance, normalise, scale (and shift): ~8 FLOPs per element.
  Op op = streaming_op(OpKind::kNorm, name, {x, gamma}, {y}, OpClass::kNorm,
                       8.0 * static_cast<double>(elements_of(x)));
  if (eager) {
    op.eager = true;
    op.bytes += eager_extra_bytes(OpKind::kNorm, false, tensor(x).dtype, elements_of(x));
  }
  append(std::move(op));
  return y;
}

TensorId Graph::unary(OpKind kind, const std::string& name, TensorId x, char reduced) {
  x = convert(x, whole(tensor(x).layout, reduced), phase_);
  TensorId y = new_tensor(name, tensor(x).layout, tensor(x).dtype);
  // tanh-GeLU ~14 FLOPs per element; softmax ~5.
  double flops = (kind == OpKind::kGelu ? 14.0 : 5.0) * static_cast<double>(elements_of(x));
  append(streaming_op(kind, name, {x}, {y},
                      kind == OpKind::kSoftmax ? OpClass::kSoftmax : OpClass::kElementwise, flops));
  return y;
}

TensorId Graph::swiglu(const std::string& name, TensorId x, char out_label, bool eager) {
  x = convert(x, without_partial(tensor(x).layout), phase_);
  Layout out = tensor(x).layout;
  out.labels.back() = out_label;  // [.., 2f] -> [.., f], same sharding
  TensorId y = new_tensor(name, out, tensor(x).dtype);
  Op op = streaming_op(OpKind::kSwiglu, name, {x}, {y}, OpClass::kElementwise,
                       8.0 * static_cast<double>(elements_of(y)));  // silu(gate) * up
  if (eager) {
    op.eager = true;
    op.bytes += eager_extra_bytes(OpKind::kSwiglu, false, tensor(x).dtype, elements_of(y));
  }
  append(std::move(op));
  return y;
}

std::pair<TensorId, TensorId> Graph::dropout(const std::string& name, TensorId x) {
  x = convert(x, without_partial(tensor(x).layout), phase_);
  TensorId y = new_tensor(name, tensor(x).layout, tensor(x).dtype);
  TensorId mask = new_tensor(name + ".mask", tensor(x).layout, DType::kFP8);  // 1 byte/element
  append(streaming_op(OpKind::kDropout, name, {x}, {y, mask}, OpClass::kElementwise,
                      2.0 * static_cast<double>(elements_of(x))));
  return {y, mask};
}

TensorId Graph::dropout_add(const std::string& name, TensorId x, TensorId residual, bool drop) {
  const Layout stream = tensor(residual).layout;
  x = convert(x, stream, phase_);
  TensorId y = new_tensor(name, stream, tensor(residual).dtype);
  std::vector<TensorId> out = {y};
  if (drop) {
    out.push_back(new_tensor(name + ".mask", stream, DType::kFP8));  // 1 byte per element
  }
  append(streaming_op(drop ? OpKind::kDropoutAdd : OpKind::kAdd, name, {x, residual},
                      std::move(out), OpClass::kElementwise,
                      3.0 * static_cast<double>(elements_of(y))));
  return y;
}

TensorId Graph::add(const std::string& name, TensorId a, TensorId b) {
  b = convert(b, tensor(a).layout, phase_);
  TensorId y = new_tensor(name, tensor(a).layout, tensor(a).dtype);
  append(streaming_op(OpKind::kAdd, name, {a, b}, {y}, OpClass::kElementwise,
                      static_cast<double>(elements_of(y))));
  return y;
}

TensorId Graph::bias_add(const std::string& name, TensorId x) {
  TensorId y = new_tensor(name, tensor(x).layout, tensor(x).dtype);
  Op op = streaming_op(OpKind::kBiasAdd, name, {x}, {y}, OpClass::kElementwise,
                       static_cast<double>(elements_of(y)));
  op.bias = true;
  append(std::move(op));
  return y;
}

TensorId Graph::accumulate_grad(const std::string& name, TensorId dw, DType main) {
  TensorId acc = new_tensor(name, tensor(dw).layout, main);
  Op op = streaming_op(OpKind::kGradient, name, {dw}, {acc}, OpClass::kElementwise,
                       static_cast<double>(elements_of(acc)));
  op.bytes += static_cast<double>(bytes_of(acc));  // the buffer is read as well as written
  op.phase = graph::Phase::kBackward;
  append(std::move(op));
  return acc;
}

namespace {

// Sliding-window attention (docs/sliding_window.md): with t keys, s queries (s = t) and a
// causal window of w <= t keys, query i attends to min(i + 1, w) of them: s w - w^2 / 2 pairs
// in all (the causal s t / 2 at w = t). The MFU convention counts s w: each query against its
// whole window, as it counts s t for causal attention.
struct WindowedPairs {
  double counted;   // pairs of the MFU convention
  double computed;  // pairs the kernel computes
};

WindowedPairs windowed_pairs(double s, double w) {
  return {s * w, s * w - w * w / 2.0};
}

}  // namespace

TensorId Graph::attention(const std::string& name, TensorId q, TensorId k, TensorId v, bool causal,
                          AxisMask query_share, std::int64_t window) {
  // q [b,s,a,dq], k [b,t,g,dq] and v [b,t,g,dv]: whole sequences, heads consistently sharded.
  // Keys and values may spell their sequence in two dimensions ([b,p,t,g,d]: a context-
  // parallel group's chunks). Queries and keys may be wider than values (MLA: dq = nope +
  // rope, docs/mla.md).
  q = convert(q, whole(tensor(q).layout, tensor(q).layout.labels[1]), phase_);
  const Layout lq = tensor(q).layout;
  double t = 1.0;
  for (TensorId* x : {&k, &v}) {
    Layout kv = tensor(*x).layout;
    kv.partial = 0;
    const std::size_t heads = kv.labels.size() - 2;
    t = 1.0;
    for (std::size_t d = 1; d < heads; ++d) {
      kv.shard[d] = kReplicated;
      t *= static_cast<double>(sym_.size(kv.labels[d]));
    }
    kv.shard[heads] = lq.axis_of(lq.labels[2]);
    kv.shard[0] = lq.axis_of('b');
    *x = convert(*x, kv, phase_);
  }
  Layout out = lq;
  out.labels.back() = tensor(v).layout.labels.back();
  TensorId y = new_tensor(name, out, tensor(q).dtype);
  double b = static_cast<double>(local_size('b', lq.axis_of('b'), sym_));
  double heads = static_cast<double>(local_size(lq.labels[2], lq.shard[2], sym_));
  double s = static_cast<double>(sym_.size(lq.labels[1]));
  double dq = static_cast<double>(sym_.size(lq.labels.back()));
  double dv = static_cast<double>(sym_.size(out.labels.back()));
  Op op;
  op.kind = OpKind::kAttention;
  op.name = name;
  op.in = {q, k, v};
  op.out = {y};
  op.phase = phase_;
  op.cls = OpClass::kAttention;
  op.causal = causal;
  op.query_share = query_share;
  op.model_flops = 2.0 * b * heads * s * t * (dq + dv);       // QK^T and PV, no causal halving
  op.flops = causal ? op.model_flops / 2.0 : op.model_flops;  // the kernel skips masked blocks
  double keys = t;  // keys per query: the kernel's sequence length
  if (causal && window > 0 && static_cast<double>(window) < t) {
    keys = static_cast<double>(window);
    const WindowedPairs p = windowed_pairs(s, keys);
    op.model_flops = 2.0 * b * heads * p.counted * (dq + dv);
    op.flops = 2.0 * b * heads * p.computed * (dq + dv);
  }
  op.gemm = {static_cast<std::int64_t>(s), static_cast<std::int64_t>(keys),
             static_cast<std::int64_t>(dq), static_cast<std::int64_t>(b * heads)};
  op.bytes = static_cast<double>(bytes_of(q) + bytes_of(k) + bytes_of(v) + bytes_of(y));
  append(std::move(op));
  return y;
}

TensorId Graph::ring_attention(const std::string& name, TensorId q, TensorId k, TensorId v,
                               bool causal, std::uint8_t axis, int ranks) {
  const TensorId y = attention(name, q, k, v, causal);
  Op& op = ops_.back();
  op.ring = axis;
  op.ring_size = ranks;
  op.model_flops *= ranks;
  op.flops *= ranks;
  return y;
}

TensorId Graph::concat(const std::string& name, const std::vector<TensorId>& parts, Layout out) {
  if (parts.empty()) {
    throw base::InternalError("concat " + name + " of no parts");
  }
  const DType dt = tensor(parts[0]).dtype;
  std::vector<TensorId> in;
  for (TensorId p : parts) {
    in.push_back(convert(p, without_partial(tensor(p).layout), phase_));
  }
  TensorId y = new_tensor(name, std::move(out), dt);
  append(streaming_op(OpKind::kConcat, name, in, {y}, OpClass::kCopy, 0.0));
  return y;
}

TensorId Graph::embedding(const std::string& name, TensorId ids, TensorId table, Layout out) {
  // A gather of rows: each rank looks up the rows of its vocabulary shard, so the output is
  // a partial sum over the axis that shards the vocabulary.
  std::uint8_t vocab_axis = tensor(table).layout.shard[0];
  if (vocab_axis != kReplicated) {
    out.partial = static_cast<AxisMask>(out.partial | (1u << vocab_axis));
  }
  TensorId y = new_tensor(name, out, tensor(table).dtype);
  Op op;
  op.kind = OpKind::kEmbedding;
  op.name = name;
  op.in = {ids, table};
  op.out = {y};
  op.phase = phase_;
  op.cls = OpClass::kEmbedding;
  op.bytes = static_cast<double>(2 * bytes_of(y) + bytes_of(ids));  // read rows, write output
  append(std::move(op));
  return y;
}

TensorId Graph::loss(const std::string& name, TensorId logits, char vocab, bool fused) {
  // Vocabulary-parallel softmax cross-entropy (Megatron): per-token max, sum of exponentials
  // and target logit are reduced over the vocabulary shards, in fp32.
  logits = convert(logits, without_partial(tensor(logits).layout), phase_);
  const Layout l = tensor(logits).layout;
  Layout stats_layout(l.labels);
  stats_layout.labels.back() = 'c';  // three statistics per token
  stats_layout.shard = l.shard;
  stats_layout.shard[stats_layout.labels.size() - 1] = kReplicated;
  std::uint8_t ax = l.axis_of(vocab);
  if (ax != kReplicated) {
    stats_layout.partial = static_cast<AxisMask>(1u << ax);
  }
  TensorId stats = new_tensor(name + ".stats", stats_layout, DType::kFP32);
  TensorId probs = new_tensor(name + ".softmax", without_partial(l), DType::kFP32);
  auto n = static_cast<double>(elements_of(logits));
  Op op;
  op.kind = OpKind::kLoss;
  op.name = name;
  op.in = {logits};
  op.out = {probs, stats};
  op.phase = phase_;
  op.cls = OpClass::kLoss;
  op.flops = 6.0 * n;
  op.bytes = static_cast<double>(bytes_of(logits) + 2 * bytes_of(probs));
  if (!fused) {  // write the fp32 copy; read for the max; subtract, exp, divide in place; sum
    op.unfused_loss = true;
    op.bytes = static_cast<double>(bytes_of(logits)) + 9.0 * static_cast<double>(bytes_of(probs));
  }
  append(std::move(op));
  return convert(stats, without_partial(stats_layout), phase_);
}

std::vector<TensorId> Graph::split(const std::string& name, TensorId x,
                                   const std::vector<Layout>& parts) {
  x = convert(x, without_partial(tensor(x).layout), phase_);
  Op op;
  op.kind = OpKind::kSplit;
  op.name = name;
  op.in = {x};
  op.phase = phase_;
  std::vector<TensorId> outs;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    TensorId t = new_tensor(fmt::format("{}.{}", name, i), parts[i], tensor(x).dtype);
    tensors_[static_cast<std::size_t>(t)].alias_of = x;
    outs.push_back(t);
  }
  op.out = outs;
  append(std::move(op));
  return outs;
}

TensorId Graph::relabel(const std::string& name, TensorId x, Layout out) {
  x = convert(x, without_partial(tensor(x).layout), phase_);
  TensorId y = new_tensor(name, std::move(out), tensor(x).dtype);
  if (elements_of(y) != elements_of(x)) {
    throw base::InternalError(fmt::format("relabel {}: {} holds {} elements, {} holds {}", name,
                                          tensor(x).layout.str(), elements_of(x),
                                          tensor(y).layout.str(), elements_of(y)));
  }
  tensors_[static_cast<std::size_t>(y)].alias_of = x;
  Op op;
  op.kind = OpKind::kSplit;
  op.name = name;
  op.in = {x};
  op.out = {y};
  op.phase = phase_;
  append(std::move(op));
  return y;
}

TensorId Graph::expand(const std::string& name, TensorId x, Layout out) {
  TensorId y = new_tensor(name, std::move(out), tensor(x).dtype);
  append(streaming_op(OpKind::kExpand, name, {x}, {y}, OpClass::kCopy, 0.0));
  return y;
}

}  // namespace tessera::synth::stg
