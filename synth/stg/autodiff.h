// SPDX-License-Identifier: Apache-2.0
// Derives the backward graph of a block from its forward graph: input- and weight-gradient
// einsums, the gradient kernels of norms, activations, dropout, softmax, attention, embedding
// and loss, and (through the matcher) every collective the gradients' layouts need. A
// gradient has the layout of its tensor without partial sums (the "dual" layout); weight
// gradients keep their data-parallel partial sum, which the bucketed reduction resolves.
#pragma once

#include <utility>
#include <vector>

#include "synth/stg/graph.h"

namespace tessera::synth::stg {

struct BackwardResult {
  OpId first_op = 0;                                        // first backward op in the graph
  std::vector<std::pair<TensorId, TensorId>> input_grads;   // block input -> its gradient
  std::vector<std::pair<TensorId, TensorId>> weight_grads;  // weight -> its gradient
  std::vector<TensorId> grad_inputs;                        // the incoming output gradients
};

// `outputs`: block outputs that receive a gradient from outside (a fresh input tensor of
// the dual layout is created for each). `inputs`: block inputs whose gradients leave it.
// A loss op, if present, seeds its own gradient.
BackwardResult derive_backward(Graph& g, const std::vector<TensorId>& outputs,
                               const std::vector<TensorId>& inputs);

}  // namespace tessera::synth::stg
