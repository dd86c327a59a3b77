// SPDX-License-Identifier: Apache-2.0
// Zero-bubble ZB-H2 (docs/pipeline_schedules.md 2.5): the orders come from zb_h2_orders
// (../zero_bubble_h2.h), which derives every rank's order at once.
#include "synth/schedule/zero_bubble_h2.h"

#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

class ZeroBubbleH2Schedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "zb-h2"; }
  [[nodiscard]] bool splits_backward() const override { return true; }
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& /*cfg*/, int p, int r,
                                        int m) const override {
    return zb_h2_orders(p, m)[static_cast<std::size_t>(r)];
  }
};

}  // namespace

void register_zero_bubble_h2(ScheduleRegistry& registry) {
  registry.add(std::make_unique<ZeroBubbleH2Schedule>());
}

}  // namespace tessera::synth::schedule
