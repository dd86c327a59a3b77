// SPDX-License-Identifier: Apache-2.0
// Per-rank operation orders of pipeline schedules (pipeline_schedules.md): which forward
// and backward microbatch a pipeline stage runs next. The simulator times the orders; the
// schedules never embed costs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::schedule {

struct Task {
  enum Kind : unsigned char { kForward, kBackward } kind = kForward;
  std::int32_t microbatch = 0;
  bool operator==(const Task&) const = default;
};

// The order stage `stage` of `stages` runs `microbatches` microbatches in.
std::vector<Task> stage_order(ScheduleKind kind, int stages, int stage, int microbatches);

// "F0 F1 B0 ..." for tests and debugging.
std::string to_string(const std::vector<Task>& order);

}  // namespace tessera::synth::schedule
