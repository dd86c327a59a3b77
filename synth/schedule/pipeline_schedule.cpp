// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/pipeline_schedule.h"

#include <algorithm>

namespace tessera::synth::schedule {

namespace {

std::vector<Task> gpipe(int m) {
  std::vector<Task> out;
  for (int j = 0; j < m; ++j) {
    out.push_back({Task::kForward, j});
  }
  for (int j = 0; j < m; ++j) {
    out.push_back({Task::kBackward, j});
  }
  return out;
}

// Megatron's forward_backward_pipelining_without_interleaving: warmup p-r-1 forwards, then
// one-forward-one-backward, then the remaining backwards.
std::vector<Task> one_f_one_b(int p, int r, int m) {
  int warmup = std::min(p - r - 1, m);
  std::vector<Task> out;
  for (int j = 0; j < warmup; ++j) {
    out.push_back({Task::kForward, j});
  }
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back({Task::kForward, warmup + i});
    out.push_back({Task::kBackward, i});
  }
  for (int j = m - warmup; j < m; ++j) {
    out.push_back({Task::kBackward, j});
  }
  return out;
}

}  // namespace

std::vector<Task> stage_order(ScheduleKind kind, int stages, int stage, int microbatches) {
  return kind == ScheduleKind::kGpipe ? gpipe(microbatches)
                                      : one_f_one_b(stages, stage, microbatches);
}

std::string to_string(const std::vector<Task>& order) {
  std::string out;
  for (const Task& t : order) {
    out += (out.empty() ? "" : " ") + std::string(t.kind == Task::kForward ? "F" : "B") +
           std::to_string(t.microbatch);
  }
  return out;
}

}  // namespace tessera::synth::schedule
