// SPDX-License-Identifier: Apache-2.0
// Zero-bubble ZB-H1, the reference "delay W by rank" variant (zero-bubble repository,
// zb-h1-quick-start; docs/pipeline_schedules.md 2.4): 1F1B's warmup; rank r > 0 splits the
// backward of its first r steady iterations and of the last one, deferring their W's; every
// cooldown backward is split; after each split backward from the last steady iteration on,
// the oldest deferred W runs; the rest run at the end. Rank 0 never splits.
#include <algorithm>

#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

Task split(Task::Kind kind, int mb, int r) {
  return {kind, mb, 0, r};
}

class ZeroBubbleH1Schedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "zb-h1"; }
  [[nodiscard]] bool splits_backward() const override { return true; }
  [[nodiscard]] bool takes_encoder_stages() const override { return true; }
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& cfg, int p, int r,
                                        int m) const override;
};

std::vector<Task> ZeroBubbleH1Schedule::order(const ScheduleConfig& /*cfg*/, int p, int r,
                                              int m) const {
  int warmup = std::min(p - r - 1, m);
  int steady = m - warmup;
  std::vector<Task> out;
  std::vector<int> deferred;
  std::size_t next_w = 0;
  auto split_b = [&](int mb, bool pop) {
    out.push_back(split(Task::kBackwardInput, mb, r));
    deferred.push_back(mb);
    if (pop) {
      out.push_back(split(Task::kWeight, deferred[next_w++], r));
    }
  };
  for (int j = 0; j < warmup; ++j) {
    out.push_back(forward_task(j, 0, p, r));
  }
  for (int i = 0; i < steady; ++i) {
    out.push_back(forward_task(warmup + i, 0, p, r));
    bool last = i == steady - 1;
    if (r > 0 && (i < r || last)) {
      split_b(i, last);
    } else {
      out.push_back(backward_task(i, 0, p, r));
    }
  }
  for (int j = steady; j < m; ++j) {
    if (r > 0) {
      split_b(j, true);
    } else {
      out.push_back(backward_task(j, 0, p, r));
    }
  }
  while (next_w < deferred.size()) {
    out.push_back(split(Task::kWeight, deferred[next_w++], r));
  }
  return out;
}

}  // namespace

void register_zero_bubble_h1(ScheduleRegistry& registry) {
  registry.add(std::make_unique<ZeroBubbleH1Schedule>());
}

}  // namespace tessera::synth::schedule
