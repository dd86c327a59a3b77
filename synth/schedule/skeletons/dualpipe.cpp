// SPDX-License-Identifier: Apache-2.0
// DeepSeek-V3's bidirectional DualPipe (docs/pipeline_schedules.md 2.7): N ranks, two pipes in
// opposite directions, M/2 microbatches each, stages as in Placement; the eight-phase program
// on each half of the ranks.
#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "synth/schedule/skeletons/eight_phases.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

class DualPipeSchedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "dualpipe"; }
  [[nodiscard]] PlacementShape shape() const override { return PlacementShape::kDual; }
  [[nodiscard]] bool splits_backward() const override { return true; }
  void check(const ScheduleConfig& cfg, int stages, int microbatches) const override;
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& /*cfg*/, int n, int r,
                                        int m) const override {
    const int h = std::min(r, n - 1 - r);
    return eight_phase_order(n / 2, h, m / 2, r >= n / 2, {r, 2 * n - 1 - r});
  }
};

// Section 2.7: N even, M even and >= 2N.
void DualPipeSchedule::check(const ScheduleConfig& /*cfg*/, int stages, int microbatches) const {
  if (stages % 2 != 0) {
    throw base::InputError(fmt::format(
        "DualPipe needs an even pp (its two pipes meet in the middle), got pp={}", stages));
  }
  if (microbatches % 2 != 0 || microbatches < 2 * stages) {
    throw base::InputError(fmt::format(
        "DualPipe needs an even number of microbatches per replica, at least 2*pp = {} (half "
        "go down each of its two pipes), got {}",
        2 * stages, microbatches));
  }
}

}  // namespace

void register_dualpipe(ScheduleRegistry& registry) {
  registry.add(std::make_unique<DualPipeSchedule>());
}

}  // namespace tessera::synth::schedule
