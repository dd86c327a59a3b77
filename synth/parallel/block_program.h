// SPDX-License-Identifier: Apache-2.0
// A block lowered to the numeric form the graph builder replays for every (microbatch,
// layer): node templates with per-device costs, dependencies by index, the recompute copies
// the recompute mode asks for, and the memory each node allocates and frees (from tensor
// lifetimes, views and in-place collectives resolved to their storage).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "synth/models/transformer.h"
#include "synth/stg/layout.h"

namespace tessera::synth::parallel {

constexpr std::int32_t kFwdInput = -1;  // dependency on the block's incoming activation
constexpr std::int32_t kBwdInput = -2;  // dependency on the block's incoming gradient

struct ProgOp {
  graph::Node node;                      // costs, kind, stream, phase, memory; name set per layer
  std::string name;                      // block-local name, e.g. "attn.qkv.wgrad"
  std::uint8_t axis = stg::kReplicated;  // collectives: the mesh axis whose group runs it
  std::vector<std::int32_t> deps;        // indices into ops, or kFwdInput / kBwdInput
  double model_flops = 0.0;
};

struct BlockProgram {
  std::string name;
  std::vector<ProgOp> ops;  // forward section first, then recompute + backward
  std::int32_t n_fwd = 0;
  // With a split backward, ops [n_fwd, w_begin) compute input gradients (B) and
  // [w_begin, size) weight gradients only (W); otherwise w_begin == ops.size().
  std::int32_t w_begin = 0;
  std::int32_t fwd_out = -1;                // op producing the block's output activation
  std::int32_t bwd_out = -1;                // op producing the gradient of the block's input
  std::int64_t out_bytes = 0;               // the output activation (a pipeline message)
  std::int64_t in_grad_bytes = 0;           // the input gradient (a pipeline message)
  std::vector<std::int32_t> wgrad_ops;      // ops whose end makes weight gradients final
  std::vector<bool> wgrad_expert;           // per wgrad op: a routed expert's (reduced over edp)
  double params = 0.0;                      // per rank
  double expert_params = 0.0;               // of params, the routed experts'
  double fp8_weight_elements = 0.0;         // per rank: the weights FP8 GEMMs read
  double fp8_expert_weight_elements = 0.0;  // of those, the routed experts'
  int fp8_gemms = 0;                        // FP8 GEMMs per forward pass
  double saved_bytes = 0.0;                 // activations kept from forward for backward
  double model_flops = 0.0;                 // per microbatch, per rank (MFU convention)
  double hardware_flops = 0.0;              // per microbatch, per rank, including recompute
};

// `split_backward`: order the backward as all B ops, then all W ops (zero-bubble schedules).
BlockProgram lower(const models::Block& block, Recompute mode, bool split_backward = false);

}  // namespace tessera::synth::parallel
