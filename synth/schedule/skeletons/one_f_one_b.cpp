// SPDX-License-Identifier: Apache-2.0
// 1F1B (docs/pipeline_schedules.md 2.2), Megatron's
// forward_backward_pipelining_without_interleaving: warmup p-r-1 forwards, then
// one-forward-one-backward, then the remaining backwards (combined 1F1B: paired).
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

class OneFOneBSchedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "1f1b"; }
  [[nodiscard]] bool takes_encoder_stages() const override { return true; }
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& cfg, int p, int r,
                                        int m) const override {
    return one_f_one_b_body(
        cfg, m, p - r - 1, [&](int k) { return forward_task(k, 0, p, r); },
        [&](int k) { return backward_task(k, 0, p, r); });
  }
};

}  // namespace

void register_one_f_one_b(ScheduleRegistry& registry) {
  registry.add(std::make_unique<OneFOneBSchedule>());
}

}  // namespace tessera::synth::schedule
