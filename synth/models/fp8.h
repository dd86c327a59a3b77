// SPDX-License-Identifier: Apache-2.0
// FP8 training as Transformer Engine runs it under Megatron-Core (docs/fp8.md): which copies a
// recipe writes on a given part, the FP8 linear layer (quantize the input, GEMM in FP8), and
// the per-step weight quantization and static memory the FP8 weight copies take.
#pragma once

#include <string>

#include "synth/scenario/scenario.h"
#include "synth/stg/graph.h"

namespace tessera::synth::models {

struct Fp8Plan {
  Fp8Recipe recipe = Fp8Recipe::kNone;
  bool transpose = false;     // the part's FP8 GEMMs need K-major operands (hw profile)
  bool param_gather = false;  // FP8 weights, gathered in FP8 (training.fp8_param_gather)

  [[nodiscard]] bool on() const { return recipe != Fp8Recipe::kNone; }
  // Activations and output gradients: a column-wise copy for the weight-gradient GEMM where
  // the part needs transposes (Hopper) or the recipe's 1x128 tiles run along the other
  // dimension (blockwise); fp32 scales per 128 elements with blockwise.
  [[nodiscard]] stg::Fp8CastSpec activation() const;
  [[nodiscard]] bool current_scaling() const { return recipe == Fp8Recipe::kTensorwise; }
  // Weights: a row-wise FP8 copy, plus a transposed one where the part needs it or the scales
  // run along the reduction dimension (MXFP8; the 128x128 blocks of blockwise serve both
  // orientations), cached for the whole step.
  [[nodiscard]] int weight_copies() const {
    return transpose || recipe == Fp8Recipe::kMxfp8 ? 2 : 1;
  }
  // Bytes per weight element of one copy's scales: blockwise 4 / 128^2, MXFP8 1 / 32, else 0.
  [[nodiscard]] double weight_scale_bytes() const;
  // With param_gather: bytes per weight element that the parameter all-gather carries (the
  // row-wise copy and its scales), and the bytes of the transpose made from the gathered copy
  // where the part needs a second one (Hopper: read and write one byte per element).
  [[nodiscard]] double gathered_weight_bytes() const;
  [[nodiscard]] double transpose_after_gather_bytes(double weight_elements) const;
  // Scaling metadata per FP8 GEMM: 5 quantizers (input, weight, output; two gradients) with
  // an fp32 scale each, plus an fp32 amax history of Megatron-Core's length 1 with delayed.
  [[nodiscard]] double meta_bytes_per_gemm() const;
};

// The scenario's plan: off unless training.fp8; the transpose fact from its hardware profile.
Fp8Plan fp8_plan(const Scenario& s);

// y = x . w as a linear layer: a plain einsum without FP8; with it, x is quantized first
// (after an amax pass with current scaling) and the GEMM runs in FP8, its backward too.
stg::TensorId linear(stg::Graph& g, const Fp8Plan& plan, const std::string& name,
                     const std::string& spec, stg::TensorId x, stg::TensorId w);

// Elements of the weights a block's FP8 GEMMs read (one rank's shard); the routed experts'
// only with experts_only.
double fp8_weight_elements(const stg::Graph& g, bool experts_only = false);
// FP8 GEMMs of the block's forward pass.
int fp8_gemms(const stg::Graph& g);

// Static bytes the FP8 weight copies of `weight_elements` (and the metadata of `gemms` FP8
// GEMMs) add on one rank; 0 without FP8.
double fp8_static_bytes(const Fp8Plan& plan, double weight_elements, int gemms);

// HBM bytes of quantizing `weight_elements` once per step: read bf16, write the copies and
// their scales (plus the amax pass's read with current scaling).
double fp8_weight_cast_bytes(const Fp8Plan& plan, double weight_elements);

}  // namespace tessera::synth::models
