// SPDX-License-Identifier: Apache-2.0
// The kernels FP8 training adds to the tensor graph (docs/fp8.md): quantization (cast, with a
// fused transpose where the backward GEMMs need a column-wise copy) and amax passes. Both are
// memory-bound copies; their bytes are what they read and write in HBM.
#include "synth/stg/graph.h"

namespace tessera::synth::stg {

using graph::OpClass;

std::pair<TensorId, TensorId> Graph::fp8_cast(const std::string& name, TensorId x, Fp8CastSpec spec,
                                              TensorId amax) {
  const Layout l = tensor(x).layout;
  TensorId row = new_tensor(name, l, DType::kFP8);
  TensorId col = spec.columnwise ? new_tensor(name + ".t", l, DType::kFP8) : row;
  std::vector<TensorId> in = {x};
  if (amax >= 0) {
    in.push_back(amax);
  }
  std::vector<TensorId> out = {row};
  if (spec.columnwise) {
    out.push_back(col);
  }
  Op op = streaming_op(OpKind::kFp8Cast, name, std::move(in), std::move(out), OpClass::kCopy, 0.0);
  auto copies = static_cast<double>(spec.columnwise ? 2 : 1);
  op.bytes += copies * spec.scale_bytes_per_element * static_cast<double>(elements_of(x));
  append(std::move(op));
  return {row, col};
}

TensorId Graph::fp8_amax(const std::string& name, TensorId x) {
  TensorId amax = new_tensor(name, Layout(""), DType::kFP32);
  append(streaming_op(OpKind::kFp8Amax, name, {x}, {amax}, OpClass::kCopy,
                      static_cast<double>(elements_of(x))));
  return amax;
}

}  // namespace tessera::synth::stg
