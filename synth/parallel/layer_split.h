// SPDX-License-Identifier: Apache-2.0
// Which of the LLM's layers each pipeline stage of a pipe holds. An even split gives stage i
// layers [i*L/n + min(i, L mod n), ...) (the remainder to the first stages; Megatron-LM's
// split when an encoder takes the first stages); an explicit list (Megatron-Core's
// --decoder-first/last-pipeline-num-layers, or a per-stage list) gives each stage its count.
#pragma once

#include <cstdint>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::parallel {

// Layer boundaries: stage i holds layers [bounds[i], bounds[i+1]); bounds.size() == stages+1.
// `counts` empty: the even split; otherwise it must have `stages` entries, each >= 0, summing
// to `layers` (base::InternalError otherwise: the scenario's validation checks it first).
std::vector<std::int64_t> layer_bounds(std::int64_t layers, std::int64_t stages,
                                       const std::vector<std::int64_t>& counts);

// The per-stage counts of Megatron-Core's uneven split: `first` layers on the first stage and
// `last` on the last (0: not given, that stage gets an even share), the rest evenly over the
// others. Returns an empty list when the rest does not divide evenly or a count is out of
// range, so that the caller can name the key.
std::vector<std::int64_t> first_last_split(std::int64_t layers, std::int64_t stages,
                                           std::int64_t first, std::int64_t last);

// The scenario's per-stage counts for `stages` LLM stages of a pipe: its stage_layers, or its
// first/last-stage counts resolved by first_last_split (empty when they cannot be), or empty
// for an even split.
std::vector<std::int64_t> stage_layer_counts(const ParallelConfig& p, std::int64_t layers,
                                             std::int64_t stages);

}  // namespace tessera::synth::parallel
