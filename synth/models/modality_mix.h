// SPDX-License-Identifier: Apache-2.0
// The modality mix of one step: which images each microbatch carries, sampled from the
// scenario's data block with its seed (or read from its per-sample list), so encoder work
// varies between microbatches the way real data does.
#pragma once

#include <cstdint>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::models {

// `images` images of `patches` encoder patches each.
struct ImageGroup {
  std::int64_t images = 0;
  std::int64_t patches = 0;
  bool operator==(const ImageGroup&) const = default;
};

// The images of one microbatch, grouped by size (ascending patches).
struct MicrobatchImages {
  std::vector<ImageGroup> groups;
  [[nodiscard]] std::int64_t images() const;
  [[nodiscard]] std::int64_t patches() const;  // over all images
};

// Per microbatch of one data-parallel replica (every replica sees the same mix). Patches
// per image round up to a multiple of encoder.merge (times tp with sequence parallelism).
// Deterministic: the same scenario and seed give the same mix on every platform.
std::vector<MicrobatchImages> sample_images(const Scenario& s);

}  // namespace tessera::synth::models
