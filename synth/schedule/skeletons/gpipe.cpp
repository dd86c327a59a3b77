// SPDX-License-Identifier: Apache-2.0
// GPipe (docs/pipeline_schedules.md 2.1): every forward, then every backward.
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

class GpipeSchedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "gpipe"; }
  [[nodiscard]] bool takes_encoder_stages() const override { return true; }
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& /*cfg*/, int p, int r,
                                        int m) const override {
    std::vector<Task> out;
    for (int j = 0; j < m; ++j) {
      out.push_back(forward_task(j, 0, p, r));
    }
    for (int j = 0; j < m; ++j) {
      out.push_back(backward_task(j, 0, p, r));
    }
    return out;
  }
};

}  // namespace

void register_gpipe(ScheduleRegistry& registry) {
  registry.add(std::make_unique<GpipeSchedule>());
}

}  // namespace tessera::synth::schedule
