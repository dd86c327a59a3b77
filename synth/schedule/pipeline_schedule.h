// SPDX-License-Identifier: Apache-2.0
// Per-rank operation orders of pipeline schedules (pipeline_schedules.md): which forward
// and backward (microbatch, model chunk) a rank runs next. The simulator times the orders;
// the schedules never embed costs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::schedule {

struct Task {
  // kBackward: the whole backward (input and weight gradients, "B" in 1F1B notation);
  // kBackwardInput / kWeight: its two halves when a zero-bubble schedule splits it ("b", "w").
  enum Kind : unsigned char { kForward, kBackward, kBackwardInput, kWeight } kind = kForward;
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;  // model chunk on this rank (interleaved: 0..v-1)
  std::int32_t stage = 0;  // virtual pipeline stage the chunk holds: chunk * p + rank
  bool operator==(const Task&) const = default;
};

// Throws base::InputError (without a position) when the schedule cannot run `microbatches`
// microbatches on `stages` ranks, e.g. interleaved with m mod p in 1..p-1.
void check_schedule(const ScheduleConfig& cfg, int stages, int microbatches);

// Whether the schedule runs weight gradients apart from input gradients.
bool splits_backward(ScheduleKind kind);

// The order rank `stage` of `stages` runs `microbatches` microbatches in.
std::vector<Task> stage_order(const ScheduleConfig& cfg, int stages, int stage, int microbatches);
std::vector<Task> stage_order(ScheduleKind kind, int stages, int stage, int microbatches);

// "F0 F1 B0 b1 w1 ..." (flat) or "F0c0 F1c0 F0c4 ..." (with the virtual stage).
std::string to_string(const std::vector<Task>& order, bool with_stage = false);

}  // namespace tessera::synth::schedule
