// SPDX-License-Identifier: Apache-2.0
// The mixture-of-experts operations of the tensor graph (docs/moe.md): router, dispatch
// (permute) and combine (unpermute), each with its layout rule and its FLOP and byte rule, as
// Megatron-Core's alltoall token dispatcher runs them (megatron/core/transformer/moe/
// router.py, moe_utils.py permute/unpermute).
#include <fmt/format.h>

#include "base/error.h"
#include "synth/stg/graph.h"

namespace tessera::synth::stg {

using graph::OpClass;

namespace {

void check_dims(const Layout& l, const char* want, const std::string& where,
                const char* also = "") {
  if (l.labels != want && l.labels != also) {
    throw base::InternalError(
        fmt::format("{}: dimensions '{}', expected '{}'", where, l.labels, want));
  }
}

}  // namespace

std::pair<TensorId, TensorId> Graph::route(const std::string& name, TensorId logits) {
  logits = convert(logits, without_partial(tensor(logits).layout), phase_);
  const Layout l = tensor(logits).layout;
  TensorId probs = new_tensor(name + ".probs", l, DType::kFP32);
  TensorId map = new_tensor(name + ".map", l, DType::kFP8);  // a bool per token and expert
  // Reads the logits; scores, top-k, normalisation and the aux-loss statistics over every
  // token's experts (~8 FLOPs an element); writes the fp32 scores for the aux loss, the probs
  // and the map.
  const auto n = static_cast<double>(elements_of(logits));
  Op op = streaming_op(OpKind::kRouter, name, {logits}, {probs, map}, OpClass::kSoftmax, 8.0 * n);
  op.bytes += 4.0 * n;
  append(std::move(op));
  return {probs, map};
}

TensorId Graph::permute(const std::string& name, TensorId x, TensorId map, const Layout& rows) {
  Layout in = without_partial(tensor(x).layout);
  check_dims(in, "bsh", name, "njoh");  // a rank's tokens, or the EP group's gathered ones
  check_dims(rows, "nxirh", name);
  in.shard[in.labels.size() - 1] = kReplicated;  // whole rows (h is last)
  x = convert(x, in, phase_);
  TensorId y = new_tensor(name, rows, tensor(x).dtype);
  // A row gather: reads each routed copy of a token's row and writes it, reads the map.
  Op op = streaming_op(OpKind::kPermute, name, {x, map}, {y}, OpClass::kCopy, 0.0);
  op.bytes = static_cast<double>(2 * bytes_of(y) + bytes_of(map));
  append(std::move(op));
  return y;
}

TensorId Graph::unpermute(const std::string& name, TensorId y, TensorId probs, const Layout& rows,
                          Layout out) {
  check_dims(out, "bsh", name, "njoh");
  check_dims(rows, "nxirh", name);
  y = convert(y, rows, phase_);
  if (const std::uint8_t a = rows.shard[1]; a != kReplicated) {  // only this rank's experts
    out.partial = static_cast<AxisMask>(out.partial | (1U << a));
  }
  TensorId z = new_tensor(name, out, tensor(y).dtype);
  // Each row scaled by its probability and added into its token's output row.
  Op op = streaming_op(OpKind::kUnpermute, name, {y, probs}, {z}, OpClass::kElementwise,
                       2.0 * static_cast<double>(elements_of(y)));
  append(std::move(op));
  return z;
}

}  // namespace tessera::synth::stg
