// SPDX-License-Identifier: Apache-2.0
// Interleaved 1F1B (docs/pipeline_schedules.md 2.3), Megatron's
// forward_backward_pipelining_with_interleaving: v model chunks per rank, microbatches in
// groups of g (default p) run through chunk 0, then chunk 1, ...
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "base/error.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

int group_size(const ScheduleConfig& cfg, int p) {
  return cfg.group > 0 ? static_cast<int>(cfg.group) : p;
}

// Megatron's get_schedule_table: (microbatch, chunk) in forward order.
std::vector<std::pair<int, int>> schedule_table(int m, int v, int g) {
  std::vector<std::pair<int, int>> table;
  for (int start = 0; start < m; start += g) {
    int end = std::min(start + g, m);
    for (int c = 0; c < v; ++c) {
      for (int mb = start; mb < end; ++mb) {
        table.emplace_back(mb, c);
      }
    }
  }
  return table;
}

class InterleavedSchedule final : public PipelineSchedule {
 public:
  [[nodiscard]] std::string_view name() const override { return "interleaved"; }
  [[nodiscard]] bool takes_chunks() const override { return true; }
  [[nodiscard]] std::string label(const ScheduleConfig& cfg) const override {
    return fmt::format("interleaved (v={})", cfg.chunks);
  }
  void check(const ScheduleConfig& cfg, int stages, int microbatches) const override;
  [[nodiscard]] std::vector<Task> order(const ScheduleConfig& cfg, int p, int r,
                                        int m) const override;
};

void InterleavedSchedule::check(const ScheduleConfig& cfg, int stages, int microbatches) const {
  int g = group_size(cfg, stages);
  if (cfg.chunks < 2) {
    throw base::InputError(fmt::format(
        "the interleaved schedule needs chunks >= 2 model chunks per rank, got {}", cfg.chunks));
  }
  if (g < stages || g > microbatches) {
    throw base::InputError(fmt::format(
        "the interleaved schedule needs pp <= group <= microbatches, got pp={}, group={}, "
        "microbatches={}",
        stages, g, microbatches));
  }
  int rem = microbatches % g;
  if (rem != 0 && rem < stages) {
    throw base::InputError(fmt::format(
        "the interleaved schedule cannot run {} microbatches in groups of {} on {} stages: the "
        "last group of {} is smaller than pp and leaves dependency bubbles (Megatron rejects "
        "it); use a multiple of {}",
        microbatches, g, stages, rem, g));
  }
}

// Warmup 2(p-r-1) + (v-1)g forward steps, then F(k + warmup) B(k), then the remaining
// backwards; backward step k runs the table's microbatch on chunk v-1-c.
std::vector<Task> InterleavedSchedule::order(const ScheduleConfig& cfg, int p, int r, int m) const {
  const int v = static_cast<int>(cfg.chunks);
  auto table = schedule_table(m, v, group_size(cfg, p));
  int total = m * v;
  int warmup = std::min(2 * (p - r - 1) + (v - 1) * group_size(cfg, p), total);
  auto f = [&](int k) { return forward_task(table[k].first, table[k].second, p, r); };
  auto b = [&](int k) { return backward_task(table[k].first, v - 1 - table[k].second, p, r); };
  return one_f_one_b_body(cfg, total, warmup, f, b);
}

}  // namespace

void register_interleaved(ScheduleRegistry& registry) {
  registry.add(std::make_unique<InterleavedSchedule>());
}

}  // namespace tessera::synth::schedule
