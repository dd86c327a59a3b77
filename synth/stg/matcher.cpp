// SPDX-License-Identifier: Apache-2.0
// The producer/consumer matcher (Graph::convert): the collectives that turn a tensor's layout
// into the one its consumer needs, step by step: partial sums resolved (reduce-scatter onto a
// dimension the target shards, else all-reduce), shards exchanged between dimensions
// (all-to-all), the rest gathered (all-gather), and a free local slice for what remains.
#include <fmt/format.h>

#include "base/error.h"
#include "synth/stg/graph.h"

namespace tessera::synth::stg {

using graph::CollType;
using graph::OpClass;

TensorId Graph::collective(TensorId x, CollType type, std::uint8_t axis, Layout out) {
  const Tensor src = tensor(x);  // a copy: new_tensor may reallocate
  TensorId y =
      new_tensor(src.name + "." + std::string(graph::coll_type_name(type)), out, src.dtype);
  Op op;
  op.kind = OpKind::kCollective;
  op.name = tensor(y).name;
  op.in = {x};
  op.out = {y};
  op.phase = phase_;
  op.coll = type;
  op.axis = axis;
  op.cls = OpClass::kCopy;
  // NCCL convention: all-reduce and reduce-scatter name their input, all-gather its output.
  op.bytes = static_cast<double>(type == CollType::kAllGather ? bytes_of(y) : bytes_of(x));
  if (type == CollType::kAllReduce) {
    tensors_[static_cast<std::size_t>(y)].alias_of = x;  // in place
  }
  append(std::move(op));
  return y;
}

// Partial sums the target does not keep: reduce-scattered onto a dimension the target shards
// over that axis (and that is whole now), else all-reduced.
TensorId Graph::reduce_partials(TensorId x, const Layout& target) {
  for (std::uint8_t a = 0; a < kNumAxes; ++a) {
    const Layout cur = tensor(x).layout;
    const auto bit = static_cast<AxisMask>(1u << a);
    if ((cur.partial & bit) == 0 || (target.partial & bit) != 0) {
      continue;
    }
    Layout next = cur;
    next.partial = static_cast<AxisMask>(next.partial & ~bit);
    int dim = -1;
    for (std::size_t d = 0; d < cur.labels.size(); ++d) {
      if (target.shard[d] == a && cur.shard[d] == kReplicated && !cur.uses_axis(a)) {
        dim = static_cast<int>(d);
      }
    }
    if (dim >= 0) {
      next.shard[static_cast<std::size_t>(dim)] = a;
    }
    x = collective(x, dim >= 0 ? CollType::kReduceScatter : CollType::kAllReduce, a, next);
  }
  return x;
}

// A dimension whose axis moves to another dimension that is whole: an all-to-all over that
// axis (each rank keeps its share of the second dimension and gathers the first; the MoE
// token dispatch and combine).
TensorId Graph::exchange_shards(TensorId x, const Layout& target) {
  const std::size_t dims = target.labels.size();
  for (std::size_t d = 0; d < dims; ++d) {
    const Layout cur = tensor(x).layout;
    const std::uint8_t a = cur.shard[d];
    if (a == kReplicated || a == target.shard[d]) {
      continue;
    }
    for (std::size_t d2 = 0; d2 < dims; ++d2) {
      if (target.shard[d2] == a && cur.shard[d2] == kReplicated) {
        Layout next = cur;
        next.shard[d] = kReplicated;
        next.shard[d2] = a;
        x = collective(x, CollType::kAllToAll, a, next);
        break;
      }
    }
  }
  return x;
}

TensorId Graph::convert(TensorId x, Layout target, graph::Phase phase) {
  graph::Phase saved = phase_;
  phase_ = phase;
  if (tensor(x).layout.labels != target.labels) {
    throw base::InternalError(
        fmt::format("convert {}: {} to {}", tensor(x).name, tensor(x).layout.str(), target.str()));
  }
  x = exchange_shards(reduce_partials(x, target), target);
  Layout cur = tensor(x).layout;
  for (std::size_t d = 0; d < cur.labels.size(); ++d) {  // the rest is gathered
    if (cur.shard[d] != kReplicated && cur.shard[d] != target.shard[d]) {
      Layout next = cur;
      next.shard[d] = kReplicated;
      x = collective(x, CollType::kAllGather, cur.shard[d], next);
      cur = next;
    }
  }
  if ((target.partial & ~cur.partial) != 0) {
    throw base::InternalError("convert: cannot create a partial sum from " + cur.str());
  }
  if (!(cur == target)) {  // only local slicing is left: a view, free
    TensorId y = new_tensor(tensor(x).name + ".slice", target, tensor(x).dtype);
    tensors_[static_cast<std::size_t>(y)].alias_of = x;
    Op op;
    op.kind = OpKind::kSplit;
    op.name = tensor(y).name;
    op.in = {x};
    op.out = {y};
    op.phase = phase_;
    append(std::move(op));
    x = y;
  }
  phase_ = saved;
  return x;
}

}  // namespace tessera::synth::stg
