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
  std::int32_t chunk = 0;  // model chunk on this rank (interleaved: 0..v-1; V shapes: 0..1)
  std::int32_t stage = 0;  // virtual pipeline stage the chunk holds (see Placement)
  bool paired = false;     // runs overlapped with the next task (DualPipe's "F&B")
  bool operator==(const Task&) const = default;
};

// Where virtual stages live. Flat: S = p, stage r on rank r. Interleaved: S = v*p, chunk c
// of rank r holds stage c*p + r. V shape (ZB-V, DualPipeV): S = 2p, rank r holds stage r
// (chunk 0) and stage 2p-1-r (chunk 1), so the last rank passes chunk 0's output to its own
// chunk 1.
class Placement {
 public:
  Placement(const ScheduleConfig& cfg, int ranks);
  [[nodiscard]] int stages() const { return stages_; }
  [[nodiscard]] int chunks() const { return chunks_; }
  [[nodiscard]] int stage_of(int rank, int chunk) const;
  [[nodiscard]] int rank_of(int stage) const;
  [[nodiscard]] int chunk_of(int stage) const;

 private:
  bool v_shape_ = false;
  int ranks_ = 1;
  int chunks_ = 1;
  int stages_ = 1;
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
std::string to_string(const std::vector<Task>& order, bool with_stage = false,
                      char stage_letter = 'c');

}  // namespace tessera::synth::schedule
