// SPDX-License-Identifier: Apache-2.0
// Module templates of a dense decoder-only transformer (embedding; decoder layer with
// MHA/GQA attention and a GeLU or SwiGLU MLP, LayerNorm or RMSNorm; final norm, LM head and
// loss), written once over symbolic dimensions and distributed by their weights' layouts.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "synth/scenario/scenario.h"
#include "synth/stg/autodiff.h"
#include "synth/stg/graph.h"

namespace tessera::synth::models {

// One block of the model with its forward and derived backward graph.
struct Block {
  std::string name;  // "embed", "layer", "head"
  stg::Graph graph;
  std::vector<stg::TensorId> inputs;   // activations flowing in (empty for the embedding)
  std::vector<stg::TensorId> outputs;  // activations flowing out (empty for the head)
  stg::BackwardResult backward;
  double params = 0.0;                      // parameters held by one rank (biases included)
  double fp8_weight_elements = 0.0;         // of those, the weights FP8 GEMMs read (docs/fp8.md)
  int fp8_gemms = 0;                        // FP8 GEMMs of the forward pass
  double expert_params = 0.0;               // of params, the routed experts' (reduced over edp)
  double fp8_expert_weight_elements = 0.0;  // of fp8_weight_elements, the routed experts'
  // The framework runs the routed experts' GEMMs and casts expert by expert
  // (model.moe.grouped_gemm: per_expert; graph::Node::host_experts).
  bool per_expert_launches = false;
};

// What sets a decoder layer apart from the plain dense one: the MoE MLP (model.moe), a
// sliding window (model.sliding_window). A model builds one block per kind its layers use.
struct LayerKind {
  bool moe = false;
  std::int64_t window = 0;  // 0: full attention
  bool operator==(const LayerKind&) const = default;
};

// Decoder layer `l`'s kind.
LayerKind layer_kind(const Scenario& s, std::int64_t l);

struct Blocks {
  Block embed;
  Block layer;  // a dense full-attention decoder layer, built for every model
  Block head;
  std::optional<Block> mtp;  // multi-token prediction on a stage of its own
  // The other kinds the decoder layers use, in order of first use, each with its block; and
  // each decoder layer's: 0 for `layer`, k for kinds[k - 1].
  std::vector<std::pair<LayerKind, Block>> kinds;
  std::vector<std::size_t> kind_of_layer;
};

// Symbol sizes of a scenario (symbols.cpp): b s t h a g d q f e v c; with model.moe x n i r u
// w y z, with model.mla C L R D P K V W, H (2h, multi-token prediction); and the mesh axes.
stg::SymbolTable symbols_of(const Scenario& s);

// The residual-stream layout between layers: batch over dp, sequence over tp when SP is on.
stg::Layout stream_layout(const Scenario& s);

Blocks build_blocks(const Scenario& s);

// Multi-token prediction on a stage of its own (mtp.cpp): from the main stream x [b, s, h] to
// [x; its own] [b, s, 2h], which the loss stage's head takes.
Block make_mtp_block(const Scenario& s);

// One decoder (or, with model.causal off, encoder) layer; `moe`: with the mixture-of-experts
// MLP; `window` > 0: its attention a sliding window of that many keys. Without `backward` the
// block is forward only: its activations die with their last forward reader (a frozen or
// detached encoder).
Block make_layer(const Scenario& s, bool backward = true, bool moe = false,
                 std::int64_t window = 0);

// Derives the block's backward graph (with the main-gradient accumulation kernels the
// scenario's framework runs), or marks it forward only.
void finish_block(Block& b, const Scenario& s, bool backward);

// Elements of the graph's weights (with `experts_only`: of the routed experts').
double weight_parameters(const stg::Graph& g, bool experts_only = false);

// Whether the input embedding and the output layer land on the same rank (then a tied
// table is one parameter; otherwise the last rank keeps a copy synchronised by all-reduce).
bool embedding_and_head_share_a_rank(const Scenario& s);

// The pipeline rank holding the LLM's embedding: 0, or the first after the encoder's stages.
std::int64_t first_llm_stage(const Scenario& s);
// The pipeline rank of the multi-token prediction module a layout puts apart from the loss
// (parallelism.pipeline_layout's "m|L"); -1 when it sits with the head.
std::int64_t mtp_rank(const Scenario& s);
// The pipeline ranks holding an embedding table: the input embedding's first, then those of
// its copies on other ranks (a tied output layer, multi-token prediction), synchronised with
// it by an all-reduce of their gradients.
std::vector<std::int64_t> embedding_table_ranks(const Scenario& s);

// Rows each expert receives from one rank's tokens of a microbatch, times ep (balanced
// routing, capped by model.moe's capacity factor): the size of the MoE rows dimension 'r'.
std::int64_t expert_rows(const Scenario& s);
// The layout of the routed rows [n, x, i, r, h] as a rank permutes them: n over edp, i over
// etp, r over ep (docs/moe.md).
stg::Layout token_rows(const Scenario& s);

// The vocabulary after Megatron-style padding to a multiple of tp.
std::int64_t padded_vocab(const Scenario& s);

}  // namespace tessera::synth::models
