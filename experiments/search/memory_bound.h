// SPDX-License-Identifier: Apache-2.0
// A lower bound on a scenario's peak HBM, cheap enough to prune a search before anything is
// simulated, and never above the simulated peak (docs/search.md §3): the most that any
// pipeline rank must hold at once, its weights, gradients and optimizer state with the
// activations its order of tasks keeps.
#pragma once

#include "synth/scenario/scenario.h"

namespace tessera::experiments::search {

struct MemoryBound {
  double static_bytes = 0.0;  // weights, main gradients and optimizer state, sharded
  // The activations the schedule's in-flight microbatches keep, with the gathered weights and
  // unsharded gradients of ZeRO-3 units kept over the step.
  double activation_bytes = 0.0;
  [[nodiscard]] double total() const { return static_bytes + activation_bytes; }
};

// `s` must be valid (synth::validate finds nothing).
MemoryBound peak_memory_lower_bound(const synth::Scenario& s);

}  // namespace tessera::experiments::search
