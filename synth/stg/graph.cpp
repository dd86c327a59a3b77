// SPDX-License-Identifier: Apache-2.0
#include "synth/stg/graph.h"

#include <fmt/format.h>

#include <optional>

#include "base/error.h"

namespace tessera::synth::stg {

using graph::CollType;
using graph::OpClass;

EinsumSpec parse_einsum(const std::string& spec) {
  auto comma = spec.find(',');
  auto arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) {
    throw base::InternalError("bad einsum spec '" + spec + "'");
  }
  return {spec.substr(0, comma), spec.substr(comma + 1, arrow - comma - 1), spec.substr(arrow + 2)};
}

std::int64_t Graph::elements_of(TensorId t) const {
  return local_elements(tensor(t).layout, sym_);
}

std::int64_t Graph::bytes_of(TensorId t) const {
  return elements_of(t) * base::dtype_bytes(tensor(t).dtype);
}

TensorId Graph::new_tensor(std::string name, Layout layout, DType dtype) {
  if (layout.labels.size() > static_cast<std::size_t>(kMaxDims)) {
    throw base::InternalError("tensor " + name + " has too many dimensions");
  }
  Tensor t;
  t.name = std::move(name);
  t.layout = std::move(layout);
  t.dtype = dtype;
  tensors_.push_back(std::move(t));
  return static_cast<TensorId>(tensors_.size() - 1);
}

TensorId Graph::input(const std::string& name, Layout layout, DType dtype) {
  return new_tensor(name, std::move(layout), dtype);
}

TensorId Graph::weight(const std::string& name, Layout layout, DType dtype) {
  TensorId t = new_tensor(name, std::move(layout), dtype);
  tensors_[static_cast<std::size_t>(t)].weight = true;
  return t;
}

TensorId Graph::expert_weight(const std::string& name, Layout layout, DType dtype) {
  TensorId t = weight(name, std::move(layout), dtype);
  tensors_[static_cast<std::size_t>(t)].expert = true;
  return t;
}

OpId Graph::append(Op op) {
  auto id = static_cast<OpId>(ops_.size());
  for (TensorId t : op.out) {
    tensors_[static_cast<std::size_t>(t)].producer = id;
  }
  ops_.push_back(std::move(op));
  return id;
}

void Graph::mark_attention_core(OpId first, OpId last) {
  for (OpId o = first; o <= last; ++o) {
    ops_[static_cast<std::size_t>(o)].attention_core = true;
  }
}

void Graph::check_labels(TensorId t, const std::string& labels, const std::string& where) const {
  const Tensor& x = tensor(t);
  if (x.layout.labels != labels) {
    throw base::InternalError(fmt::format("{}: operand {} has dimensions '{}' but '{}' expected",
                                          where, x.name, x.layout.labels, labels));
  }
}

// ---- einsum ---------------------------------------------------------------------------

Layout Graph::einsum_output(const std::string& spec, const Layout& a, const Layout& b) const {
  EinsumSpec s = parse_einsum(spec);
  Layout out(s.c);
  for (std::size_t i = 0; i < s.c.size(); ++i) {
    std::uint8_t ax = a.find(s.c[i]) >= 0 ? a.axis_of(s.c[i]) : b.axis_of(s.c[i]);
    if (ax != kReplicated && out.uses_axis(ax)) {
      throw base::InternalError(
          fmt::format("einsum {}: axis {} shards two output dimensions", spec, axis_name(ax)));
    }
    out.shard[i] = ax;
  }
  for (char l : s.a + s.b) {
    if (s.c.find(l) == std::string::npos) {
      std::uint8_t ax = a.find(l) >= 0 ? a.axis_of(l) : b.axis_of(l);
      if (ax != kReplicated) {
        out.partial = static_cast<AxisMask>(out.partial | (1u << ax));
      }
    }
  }
  return out;
}

namespace {

// The layout `other` must take so that every shared label agrees with `anchor`; labels of
// its own keep their axis unless that axis is already taken.
Layout required_layout(const Layout& other, const Layout& anchor) {
  Layout req(other.labels);
  for (std::size_t i = 0; i < other.labels.size(); ++i) {
    char l = other.labels[i];
    if (anchor.find(l) >= 0) {
      req.shard[i] = anchor.axis_of(l);
    }
  }
  for (std::size_t i = 0; i < other.labels.size(); ++i) {
    char l = other.labels[i];
    std::uint8_t own = other.shard[i];
    if (anchor.find(l) < 0 && own != kReplicated && !anchor.uses_axis(own) && !req.uses_axis(own)) {
      req.shard[i] = own;
    }
  }
  return req;
}

}  // namespace

TensorId Graph::einsum(const std::string& name, const std::string& spec, TensorId a, TensorId b) {
  return einsum_impl(name, spec, a, b, std::nullopt);
}

TensorId Graph::einsum_fp8(const std::string& name, const std::string& spec, TensorId a, TensorId b,
                           DType out) {
  return einsum_impl(name, spec, a, b, out);
}

// The (batched) GEMM shape of an einsum from the operands' local sizes; `all` gets the
// product of every label's size (FLOPs / 2).
graph::GemmDims Graph::einsum_dims(const EinsumSpec& s, TensorId a, TensorId b, double& all) const {
  auto size = [&](char l) {
    const Layout& la = tensor(a).layout;
    return la.find(l) >= 0 ? local_size(l, la.axis_of(l), sym_)
                           : local_size(l, tensor(b).layout.axis_of(l), sym_);
  };
  graph::GemmDims g{1, 1, 1, 1};
  std::string seen;
  for (char l : s.a + s.b) {
    if (seen.find(l) != std::string::npos) {
      continue;
    }
    seen += l;
    auto n = size(l);
    all *= static_cast<double>(n);
    bool in_a = s.a.find(l) != std::string::npos;
    bool in_b = s.b.find(l) != std::string::npos;
    bool in_c = s.c.find(l) != std::string::npos;
    (in_a && in_b && in_c ? g.batch : in_a && in_b ? g.k : in_a ? g.m : g.n) *= n;
  }
  return g;
}

// `fp8_out`: an FP8 GEMM writing that type; nullopt: a GEMM in its operands' type.
TensorId Graph::einsum_impl(const std::string& name, const std::string& spec, TensorId a,
                            TensorId b, std::optional<DType> fp8_out) {
  EinsumSpec s = parse_einsum(spec);
  check_labels(a, s.a, name);
  check_labels(b, s.b, name);
  bool anchor_is_b = tensor(b).weight && !tensor(a).weight;
  TensorId anchor = anchor_is_b ? b : a;
  TensorId other = anchor_is_b ? a : b;
  anchor = convert(anchor, without_partial(tensor(anchor).layout), phase_);
  other = convert(other, required_layout(tensor(other).layout, tensor(anchor).layout), phase_);
  a = anchor_is_b ? other : anchor;
  b = anchor_is_b ? anchor : other;
  Layout out = einsum_output(spec, tensor(a).layout, tensor(b).layout);
  DType dt = fp8_out ? *fp8_out : tensor(a).weight ? tensor(b).dtype : tensor(a).dtype;
  TensorId y = new_tensor(name, out, dt);
  Op op;
  op.kind = OpKind::kEinsum;
  op.name = name;
  op.in = {a, b};
  op.out = {y};
  op.phase = phase_;
  op.spec = spec;
  op.cls = OpClass::kGemm;
  double all = 1.0;
  op.gemm = einsum_dims(s, a, b, all);
  op.flops = 2.0 * all;
  op.model_flops = op.flops;
  // An FP8 GEMM reads its weight through the weight's FP8 copy: one byte per element.
  auto read = [&](TensorId t) {
    return fp8_out && tensor(t).weight ? elements_of(t) : bytes_of(t);
  };
  op.bytes = static_cast<double>(read(a) + read(b) + bytes_of(y));
  op.fp8 = fp8_out.has_value();
  append(std::move(op));
  return y;
}

}  // namespace tessera::synth::stg
