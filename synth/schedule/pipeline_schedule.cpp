// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

void check_schedule(const ScheduleConfig& cfg, int stages, int microbatches) {
  builtin_schedules().get(cfg.kind).check(cfg, stages, microbatches);
}

std::vector<Task> stage_order(const ScheduleConfig& cfg, int stages, int stage, int microbatches) {
  const PipelineSchedule& schedule = builtin_schedules().get(cfg.kind);
  schedule.check(cfg, stages, microbatches);
  return schedule.order(cfg, stages, stage, microbatches);
}

bool splits_backward(ScheduleKind kind) {
  return builtin_schedules().get(kind).splits_backward();
}

bool takes_chunks(ScheduleKind kind) {
  return builtin_schedules().get(kind).takes_chunks();
}

PlacementShape placement_shape(ScheduleKind kind) {
  return builtin_schedules().get(kind).shape();
}

Placement::Placement(const ScheduleConfig& cfg, int ranks)
    : shape_(builtin_schedules().get(cfg.kind).shape()),
      ranks_(ranks),
      chunks_(shape_ != PlacementShape::kFlat
                  ? 2
                  : static_cast<int>(std::max<std::int64_t>(cfg.chunks, 1))),
      pipes_(shape_ == PlacementShape::kDual ? 2 : 1),
      stages_(chunks_ * ranks) {}

// The V and DualPipe place alike (rank r: stages r and 2p-1-r); they differ in the pipes.
int Placement::stage_of(int rank, int chunk) const {
  if (shape_ != PlacementShape::kFlat) {
    return chunk == 0 ? rank : 2 * ranks_ - 1 - rank;
  }
  return chunk * ranks_ + rank;
}

int Placement::rank_of(int stage) const {
  if (shape_ != PlacementShape::kFlat) {
    return stage < ranks_ ? stage : 2 * ranks_ - 1 - stage;
  }
  return stage % ranks_;
}

int Placement::chunk_of(int stage) const {
  if (shape_ != PlacementShape::kFlat) {
    return stage < ranks_ ? 0 : 1;
  }
  return stage / ranks_;
}

std::vector<Task> stage_order(ScheduleKind kind, int stages, int stage, int microbatches) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  return stage_order(cfg, stages, stage, microbatches);
}

std::string to_string(const std::vector<Task>& order, bool with_stage, char stage_letter) {
  std::string out;
  for (const Task& t : order) {
    constexpr std::string_view kLetters = "FBbw";
    bool second_of_pair = !out.empty() && out.back() == '&';
    out += (out.empty() || second_of_pair ? "" : " ") + std::string(t.paired ? "[" : "") +
           std::string(1, kLetters[t.kind]) + std::to_string(t.microbatch);
    if (with_stage) {
      out += std::string(1, stage_letter) + std::to_string(t.stage);
    }
    out += t.paired ? "&" : (second_of_pair ? "]" : "");
  }
  return out;
}

}  // namespace tessera::synth::schedule
