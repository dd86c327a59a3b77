// SPDX-License-Identifier: Apache-2.0
// 1F1B (docs/pipeline_schedules.md 2.2), Megatron's
// forward_backward_pipelining_without_interleaving: warmup p-r-1 forwards, then
// one-forward-one-backward, then the remaining backwards.
#include <algorithm>

#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

class OneFOneBSchedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "1f1b"; }
  [[nodiscard]] bool takes_encoder_stages() const override { return true; }
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& /*cfg*/, int p, int r,
                                        int m) const override {
    int warmup = std::min(p - r - 1, m);
    std::vector<Task> out;
    for (int j = 0; j < warmup; ++j) {
      out.push_back(forward_task(j, 0, p, r));
    }
    for (int i = 0; i < m - warmup; ++i) {
      out.push_back(forward_task(warmup + i, 0, p, r));
      out.push_back(backward_task(i, 0, p, r));
    }
    for (int j = m - warmup; j < m; ++j) {
      out.push_back(backward_task(j, 0, p, r));
    }
    return out;
  }
};

}  // namespace

void register_one_f_one_b(ScheduleRegistry& registry) {
  registry.add(std::make_unique<OneFOneBSchedule>());
}

}  // namespace tessera::synth::schedule
