// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules (skeletons): one class per schedule, each in its own file in this folder,
// registered explicitly by name in schedule_registry.cpp (no static-initialiser registration).
// Contract: order() gives rank `stage`'s tasks for `microbatches` microbatches on `stages`
// ranks, deterministically and without costs; it may assume check() accepted the arguments.
// check() throws base::InputError (without a position) for a pipeline size or microbatch count
// the schedule cannot run.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {

class PipelineSchedule {
 public:
  PipelineSchedule() = default;
  PipelineSchedule(const PipelineSchedule&) = delete;
  PipelineSchedule& operator=(const PipelineSchedule&) = delete;
  virtual ~PipelineSchedule() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;  // the registry key: "1f1b"
  [[nodiscard]] ScheduleKind kind() const { return ScheduleKind(name()); }
  [[nodiscard]] virtual PlacementShape shape() const { return PlacementShape::kFlat; }
  // Whether weight gradients run apart from input gradients (zero-bubble schedules).
  [[nodiscard]] virtual bool splits_backward() const { return false; }
  // Whether the encoder may take the first pipeline stages under this skeleton (one pipe of
  // one chunk per rank, so stages may hold uneven layer counts).
  [[nodiscard]] virtual bool takes_encoder_stages() const { return false; }
  // Whether the schedule takes model chunks per rank (`interleaved:2`, `chunks:`).
  [[nodiscard]] virtual bool takes_chunks() const { return false; }
  // The label reports print: the name, or "interleaved (v=2)".
  [[nodiscard]] virtual std::string label(const ScheduleConfig& /*cfg*/) const {
    return std::string(name());
  }
  virtual void check(const ScheduleConfig& /*cfg*/, int /*stages*/, int /*microbatches*/) const {}
  [[nodiscard]] virtual std::vector<Task> order(const ScheduleConfig& cfg, int stages, int stage,
                                                int microbatches) const = 0;
};

class ScheduleRegistry {
 public:
  void add(std::unique_ptr<PipelineSchedule> schedule);
  [[nodiscard]] const PipelineSchedule* find(std::string_view name) const;  // nullptr: unknown
  [[nodiscard]] const PipelineSchedule& get(ScheduleKind kind) const;
  [[nodiscard]] std::span<const std::string_view> names() const { return names_; }

 private:
  std::vector<std::unique_ptr<PipelineSchedule>> entries_;
  std::vector<std::string_view> names_;  // in registration order: the order `list` prints
};

// The built-in schedules, registered once by register_builtin_schedules().
const ScheduleRegistry& builtin_schedules();
void register_builtin_schedules(ScheduleRegistry& registry);
void register_gpipe(ScheduleRegistry& registry);
void register_one_f_one_b(ScheduleRegistry& registry);
void register_interleaved(ScheduleRegistry& registry);
void register_zero_bubble_h1(ScheduleRegistry& registry);
void register_zero_bubble_h2(ScheduleRegistry& registry);
void register_dualpipev(ScheduleRegistry& registry);
void register_dualpipe(ScheduleRegistry& registry);

// Shared by the flat skeletons: a forward / whole backward of microbatch `mb` on chunk
// `chunk` of rank `r` of `p` (virtual stage chunk * p + r).
inline Task forward_task(int mb, int chunk, int p, int r) {
  return {Task::kForward, mb, chunk, chunk * p + r};
}
inline Task backward_task(int mb, int chunk, int p, int r) {
  return {Task::kBackward, mb, chunk, chunk * p + r};
}

// The 1F1B body 1F1B and interleaved share: `warmup` forward steps, then forward step
// k + warmup beside backward step k, then the remaining backwards; `total` steps of each.
// Combined 1F1B (Megatron-Core's --overlap-moe-expert-parallel-comm, cfg.combined_1f1b)
// warms up one step more and runs each steady-state forward as a pair with its backward.
template <typename Forward, typename Backward>
std::vector<Task> one_f_one_b_body(const ScheduleConfig& cfg, int total, int warmup, Forward f,
                                   Backward b) {
  warmup = std::min(warmup + (cfg.combined_1f1b ? 1 : 0), total);
  std::vector<Task> out;
  for (int k = 0; k < warmup; ++k) {
    out.push_back(f(k));
  }
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(f(k + warmup));
    out.back().paired = cfg.combined_1f1b;
    out.push_back(b(k));
  }
  for (int k = total - warmup; k < total; ++k) {
    out.push_back(b(k));
  }
  return out;
}

}  // namespace tessera::synth::schedule
