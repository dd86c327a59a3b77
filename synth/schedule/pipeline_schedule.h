// SPDX-License-Identifier: Apache-2.0
// Per-rank operation orders of pipeline schedules (docs/pipeline_schedules.md): which forward
// and backward (microbatch, model chunk) a rank runs next. The simulator times the orders;
// the schedules never embed costs. Each schedule lives in skeletons/ (one file each) and is
// found through the registry (skeletons/skeleton.h); the functions here dispatch to it.
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
  // Counted per pipe: 0..m-1 with one pipe, 0..m/2-1 in each of DualPipe's two pipes.
  std::int32_t microbatch = 0;
  // Model chunk on this rank: interleaved 0..v-1; V shapes 0..1 (the descending leg is 1);
  // DualPipe 0 for pipe A and 1 for pipe B. Always Placement::chunk_of(stage).
  std::int32_t chunk = 0;
  std::int32_t stage = 0;  // virtual pipeline stage the chunk holds (see Placement)
  bool paired = false;     // runs overlapped with the next task (DualPipe's "F&B")
  bool operator==(const Task&) const = default;
};

// Where virtual stages live (docs/pipeline_schedules.md 4.1, "virtual-stage map"). A microbatch
// runs its forward through the stages of one pipe in order, first_of_pipe to last_of_pipe
// (next_stage), and its backward back (prev_stage); -1 marks a pipe's ends.
//  - Flat: S = p stages, stage r on rank r; one pipe.
//  - Interleaved: S = v*p, chunk c of rank r holds stage c*p + r; one pipe, so stage p-1 on
//    rank p-1 feeds stage p on rank 0.
//  - V shape (ZB-V, DualPipeV): S = 2p, rank r holds stage r (chunk 0) and stage 2p-1-r
//    (chunk 1); one pipe, so the last rank passes chunk 0's output to its own chunk 1.
//  - DualPipe (section 2.7): two pipes of N = p stages over the same ranks in opposite
//    directions, S = 2N. Pipe A is stages [0, N), stage s on rank s (chunk 0); pipe B is
//    stages [N, 2N), its s-th stage is virtual stage N+s on rank N-1-s (chunk 1). Rank r thus
//    holds stages r and 2N-1-r, as in the V shape, but stage N-1 ends pipe A and stage N
//    starts pipe B. Each pipe is a full copy of the model (2x parameters): stage N+s holds
//    the same layers as stage s (stage_in_pipe), and each pipe runs half the microbatches.
// How a schedule lays virtual stages on ranks: flat (interleaved included), a V (two chunks
// per rank, one pipe) or DualPipe's two pipes in opposite directions.
enum class PlacementShape : unsigned char { kFlat, kV, kDual };

class Placement {
 public:
  Placement(const ScheduleConfig& cfg, int ranks);
  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] int stages() const { return stages_; }  // S, virtual stages of all pipes
  [[nodiscard]] int chunks() const { return chunks_; }  // stages per rank
  [[nodiscard]] int pipes() const { return pipes_; }    // 2 for DualPipe, else 1
  [[nodiscard]] int stages_per_pipe() const { return stages_ / pipes_; }
  // Microbatches each pipe runs when a step runs `microbatches` (DualPipe: half each).
  [[nodiscard]] int pipe_microbatches(int microbatches) const { return microbatches / pipes_; }
  [[nodiscard]] int stage_of(int rank, int chunk) const;
  [[nodiscard]] int rank_of(int stage) const;
  [[nodiscard]] int chunk_of(int stage) const;
  [[nodiscard]] int pipe_of(int stage) const { return stage / stages_per_pipe(); }
  // The stage's position in its pipe, 0..stages_per_pipe()-1: which slice of the model
  // (layers [i*L/n, (i+1)*L/n) for n = stages_per_pipe()) it holds.
  [[nodiscard]] int stage_in_pipe(int stage) const { return stage % stages_per_pipe(); }
  // The stage a forward comes from / goes to, -1 at the pipe's first / last stage.
  [[nodiscard]] int prev_stage(int stage) const { return first_of_pipe(stage) ? -1 : stage - 1; }
  [[nodiscard]] int next_stage(int stage) const { return last_of_pipe(stage) ? -1 : stage + 1; }
  // The pipe's first stage takes the embedding; its last one the head and loss.
  [[nodiscard]] bool first_of_pipe(int stage) const { return stage_in_pipe(stage) == 0; }
  [[nodiscard]] bool last_of_pipe(int stage) const {
    return stage_in_pipe(stage) == stages_per_pipe() - 1;
  }

 private:
  PlacementShape shape_ = PlacementShape::kFlat;
  int ranks_ = 1;
  int chunks_ = 1;
  int pipes_ = 1;
  int stages_ = 1;
};

// Throws base::InputError (without a position) when the schedule cannot run `microbatches`
// microbatches on `stages` ranks, e.g. interleaved with m mod p in 1..p-1, DualPipe with an
// odd number of ranks or of microbatches, or DualPipe(V) with fewer than 2p microbatches.
void check_schedule(const ScheduleConfig& cfg, int stages, int microbatches);

// Whether the schedule runs weight gradients apart from input gradients.
bool splits_backward(ScheduleKind kind);
// Whether the schedule takes model chunks per rank (interleaved).
bool takes_chunks(ScheduleKind kind);
// How the schedule lays its virtual stages on ranks.
PlacementShape placement_shape(ScheduleKind kind);

// The order rank `stage` of `stages` runs `microbatches` microbatches in (all pipes'
// together: DualPipe's rank runs microbatches/2 of each pipe). ZB-H2 derives every rank's
// order at once (zero_bubble_h2.h), so prefer make_plan (plan_check.h) for all ranks.
std::vector<Task> stage_order(const ScheduleConfig& cfg, int stages, int stage, int microbatches);
std::vector<Task> stage_order(ScheduleKind kind, int stages, int stage, int microbatches);

// "F0 F1 B0 b1 w1 ..." (flat) or "F0c0 F1c0 F0c4 ..." (with the virtual stage).
std::string to_string(const std::vector<Task>& order, bool with_stage = false,
                      char stage_letter = 'c');

}  // namespace tessera::synth::schedule
