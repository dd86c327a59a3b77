// SPDX-License-Identifier: Apache-2.0
// The vision-encoder template of a multimodal model (Qwen2-VL's layout): a patch embedding
// (a linear map of each patch's pixels), transformer layers with bidirectional attention over
// each image's patches, and a projector that merges `merge` neighbouring patches into one
// token of the LLM's width (LayerNorm, then a two-layer GeLU MLP). Written over the same
// symbolic dimensions and layouts as the LLM, so tensor and sequence parallelism distribute
// it the same way.
#pragma once

#include <cstdint>

#include "synth/models/transformer.h"

namespace tessera::synth::models {

struct EncoderBlocks {
  Block patch;      // pixels -> patch embeddings
  Block layer;      // one encoder layer
  Block projector;  // merged patches -> LLM-width features
};

// The blocks for `images` images of `patches` patches each in one data-parallel replica's
// microbatch. Without `backward` they are forward only (a frozen or detached encoder).
EncoderBlocks build_encoder_blocks(const Scenario& s, std::int64_t images, std::int64_t patches,
                                   bool backward);

// The encoder's parameters held by one rank (tensor-parallel shards, biases included).
double encoder_parameters(const Scenario& s);

}  // namespace tessera::synth::models
