// SPDX-License-Identifier: Apache-2.0
// The registry of pipeline schedules and the one place that lists the built-in ones.
#include <fmt/format.h>

#include "base/error.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

void ScheduleRegistry::add(std::unique_ptr<PipelineSchedule> schedule) {
  if (find(schedule->name()) != nullptr) {
    throw base::InternalError(fmt::format("schedule '{}' registered twice", schedule->name()));
  }
  names_.push_back(schedule->name());
  entries_.push_back(std::move(schedule));
}

const PipelineSchedule* ScheduleRegistry::find(std::string_view name) const {
  for (const auto& s : entries_) {
    if (s->name() == name) {
      return s.get();
    }
  }
  return nullptr;
}

const PipelineSchedule& ScheduleRegistry::get(ScheduleKind kind) const {
  for (const auto& s : entries_) {
    if (s->kind() == kind) {
      return *s;
    }
  }
  throw base::InternalError(fmt::format("no schedule registered as '{}'", kind.name()));
}

// The order here is the order `tessera list`, --help and "did you mean" print.
void register_builtin_schedules(ScheduleRegistry& registry) {
  register_gpipe(registry);
  register_one_f_one_b(registry);
  register_interleaved(registry);
  register_zero_bubble_h1(registry);
  register_zero_bubble_h2(registry);
  register_dualpipev(registry);
  register_dualpipe(registry);
}

const ScheduleRegistry& builtin_schedules() {
  static const ScheduleRegistry registry = [] {
    ScheduleRegistry r;
    register_builtin_schedules(r);
    return r;
  }();
  return registry;
}

}  // namespace tessera::synth::schedule
