// SPDX-License-Identifier: Apache-2.0
// DeepSeek's DualPipeV (docs/pipeline_schedules.md 2.8): N ranks, one V of 2N stages (rank r holds
// stages r and 2N-1-r), M microbatches, the eight-phase program.
#include <fmt/format.h>

#include "base/error.h"
#include "synth/schedule/skeletons/eight_phases.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

class DualPipeVSchedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "dualpipev"; }
  [[nodiscard]] PlacementShape shape() const override { return PlacementShape::kV; }
  [[nodiscard]] bool splits_backward() const override { return true; }
  void check(const ScheduleConfig& /*cfg*/, int stages, int microbatches) const override {
    if (microbatches < 2 * stages) {
      throw base::InputError(
          fmt::format("DualPipeV needs at least 2*pp = {} microbatches per replica, got {}",
                      2 * stages, microbatches));
    }
  }
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& /*cfg*/, int n, int r,
                                        int m) const override {
    return eight_phase_order(n, r, m, false, {r, 2 * n - 1 - r});
  }
};

}  // namespace

void register_dualpipev(ScheduleRegistry& registry) {
  registry.add(std::make_unique<DualPipeVSchedule>());
}

}  // namespace tessera::synth::schedule
