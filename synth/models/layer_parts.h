// SPDX-License-Identifier: Apache-2.0
// The parts decoder layers are built from, shared by the dense layer (transformer.cpp) and the
// mixture-of-experts MLP (moe.cpp). Internal to synth/models.
#pragma once

#include <string>

#include "synth/models/fp8.h"
#include "synth/scenario/scenario.h"
#include "synth/stg/graph.h"

namespace tessera::synth::models {

// A layout of `labels` with `dim` sharded over `a`.
stg::Layout sharded(const std::string& labels, char dim, Axis a);

// A LayerNorm or RMSNorm over the hidden dimension, with its weight.
stg::TensorId norm(stg::Graph& g, const Scenario& s, const std::string& name, stg::TensorId x);

// Megatron's local linear layers add biases in kernels of their own (docs/formulas.md §4.2).
bool separate_bias(const Scenario& s);
// Marks y's producer as adding a bias (when the layers add biases separately); returns y.
stg::TensorId with_fused_bias(stg::Graph& g, const Scenario& s, stg::TensorId y);

// A tensor-parallel MLP's labels: its width, fc1's output (2 x width with SwiGLU, else the
// width itself), and whether its fc1 adds a bias.
struct MlpLabels {
  std::string prefix;  // "mlp", "moe.shared"
  char width = 'f';
  char fc1_width = 'e';
  bool bias = true;
};

// fc1 (column-parallel), the activation, fc2 (row-parallel) on a normed input [b, s, h]; the
// output is fc2's partial sum over tp.
stg::TensorId mlp_branch(stg::Graph& g, const Scenario& s, const Fp8Plan& fp8, stg::TensorId ln,
                         const MlpLabels& m);

// The attention core on q [b, s, heads, dq], k [b, t, kv heads, dq], v [b, t, kv heads, dv]:
// fused attention, reaching the other ranks' keys and values under context parallelism
// (context_parallel.cpp); `window` > 0: a sliding window of that many keys per query.
stg::TensorId core_attention(stg::Graph& g, const Scenario& s, const std::string& name,
                             stg::TensorId q, stg::TensorId k, stg::TensorId v,
                             std::int64_t window = 0);

// A decoder layer's attention (MHA/GQA, or latent attention with model.mla; `window` as
// core_attention's) and dense MLP, each with its norm and residual on the stream x.
stg::TensorId attention(stg::Graph& g, const Scenario& s, const Fp8Plan& fp8, stg::TensorId x,
                        std::int64_t window = 0);
stg::TensorId mlp(stg::Graph& g, const Scenario& s, const Fp8Plan& fp8, stg::TensorId x);

// DeepSeek-V3's multi-token prediction modules (model.mtp_depth) after the main head, on the
// last decoder layer's output x, sharing the output layer's weight; returns their embedding
// table (mtp.cpp).
stg::TensorId add_mtp(stg::Graph& g, const Scenario& s, const Fp8Plan& fp8, stg::TensorId x,
                      stg::TensorId lm_head);
// The multi-token prediction module's final norm, logits (the shared output layer) and loss,
// on its hidden states y (mtp.cpp).
void mtp_loss(stg::Graph& g, const Scenario& s, stg::TensorId y, stg::TensorId lm_head);

// DeepSeek's multi-head latent attention with its norm and residual on the stream x
// (docs/mla.md).
stg::TensorId mla_attention(stg::Graph& g, const Scenario& s, const Fp8Plan& fp8, stg::TensorId x,
                            std::int64_t window = 0);

// A mixture-of-experts MLP with its norm and residual on the stream x (docs/moe.md).
stg::TensorId moe_mlp(stg::Graph& g, const Scenario& s, const Fp8Plan& fp8, stg::TensorId x);

}  // namespace tessera::synth::models
