// SPDX-License-Identifier: Apache-2.0
// The lowered encoder blocks a step needs: for every distinct (images, patches) group of the
// step's modality mix, the patch embedding, one encoder layer and the projector, in a forward-
// only variant (frozen or detached forwards) and, for a trained encoder, a variant with its
// derived backward.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "synth/models/modality_mix.h"
#include "synth/parallel/block_program.h"

namespace tessera::synth::parallel {

struct EncoderProgram {
  BlockProgram patch;
  BlockProgram layer;
  BlockProgram projector;
  [[nodiscard]] const BlockProgram& block(std::size_t k, std::size_t layers) const {
    return k == 0 ? patch : k == layers + 1 ? projector : layer;
  }
};

class EncoderPrograms {
 public:
  EncoderPrograms() = default;
  // The mix comes from `s`; the blocks are lowered with `lowering`'s parallelism (the
  // encoder's own devices run it without tensor parallelism) when given.
  explicit EncoderPrograms(const Scenario& s, const Scenario* lowering = nullptr);

  [[nodiscard]] bool present() const { return !mix_.empty(); }
  [[nodiscard]] const std::vector<models::MicrobatchImages>& mix() const { return mix_; }
  // The program of one group; `backward`: the trained variant (its forward first).
  [[nodiscard]] const EncoderProgram& get(const models::ImageGroup& g, bool backward) const;
  // A program with every op name the step uses (the trained variant when there is one).
  [[nodiscard]] const EncoderProgram& representative() const;
  // Bytes of one microbatch's encoder input (pixels) and output (features) on one rank.
  [[nodiscard]] std::int64_t input_bytes(std::int32_t mb) const;
  [[nodiscard]] std::int64_t feature_bytes(std::int32_t mb) const;
  // Bytes flowing into chain block k (1..L+1: the previous block's output, summed over the
  // microbatch's image groups; L+2: the features).
  [[nodiscard]] std::int64_t boundary_bytes(std::int32_t mb, std::size_t k) const;
  // Per microbatch, per rank: model FLOPs (forward, plus backward when trained) and forward
  // FLOPs only.
  [[nodiscard]] double model_flops(std::int32_t mb) const;
  [[nodiscard]] double forward_flops(std::int32_t mb) const;
  [[nodiscard]] double params() const { return params_; }  // per rank
  [[nodiscard]] std::int64_t layers() const { return layers_; }

 private:
  std::vector<models::MicrobatchImages> mix_;
  std::map<std::pair<std::int64_t, std::int64_t>, EncoderProgram> forward_;
  std::map<std::pair<std::int64_t, std::int64_t>, EncoderProgram> trained_;
  std::int64_t layers_ = 0;
  double params_ = 0.0;
  double pixel_bytes_ = 0.0;    // per patch, per rank
  double feature_bytes_ = 0.0;  // per merged token, per rank
  std::int64_t merge_ = 1;
};

}  // namespace tessera::synth::parallel
