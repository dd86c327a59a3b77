// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sim/base/error.h"

namespace tessera::synth::schedule {

namespace {

Task fwd(int mb, int chunk, int p, int r) {
  return {Task::kForward, mb, chunk, chunk * p + r};
}
Task bwd(int mb, int chunk, int p, int r) {
  return {Task::kBackward, mb, chunk, chunk * p + r};
}

std::vector<Task> gpipe(int p, int r, int m) {
  std::vector<Task> out;
  for (int j = 0; j < m; ++j) {
    out.push_back(fwd(j, 0, p, r));
  }
  for (int j = 0; j < m; ++j) {
    out.push_back(bwd(j, 0, p, r));
  }
  return out;
}

// Megatron's forward_backward_pipelining_without_interleaving: warmup p-r-1 forwards, then
// one-forward-one-backward, then the remaining backwards.
std::vector<Task> one_f_one_b(int p, int r, int m) {
  int warmup = std::min(p - r - 1, m);
  std::vector<Task> out;
  for (int j = 0; j < warmup; ++j) {
    out.push_back(fwd(j, 0, p, r));
  }
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back(fwd(warmup + i, 0, p, r));
    out.push_back(bwd(i, 0, p, r));
  }
  for (int j = m - warmup; j < m; ++j) {
    out.push_back(bwd(j, 0, p, r));
  }
  return out;
}

// Megatron's get_schedule_table: microbatches in groups of g, each group run through chunk
// 0, then chunk 1, ... (pipeline_schedules.md 2.3).
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

// Megatron's forward_backward_pipelining_with_interleaving: warmup 2(p-r-1) + (v-1)g
// forward steps, then F(k + warmup) B(k), then the remaining backwards; backward step k
// runs the table's microbatch on chunk v-1-c.
std::vector<Task> interleaved(int p, int r, int m, int v, int g) {
  auto table = schedule_table(m, v, g);
  int total = m * v;
  int warmup = std::min(2 * (p - r - 1) + (v - 1) * g, total);
  auto f = [&](int k) { return fwd(table[k].first, table[k].second, p, r); };
  auto b = [&](int k) { return bwd(table[k].first, v - 1 - table[k].second, p, r); };
  std::vector<Task> out;
  for (int k = 0; k < warmup; ++k) {
    out.push_back(f(k));
  }
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(f(k + warmup));
    out.push_back(b(k));
  }
  for (int k = total - warmup; k < total; ++k) {
    out.push_back(b(k));
  }
  return out;
}

Task split(Task::Kind kind, int mb, int r) {
  return {kind, mb, 0, r};
}

// Zero-bubble ZB-H1, the reference "delay W by rank" variant (zero-bubble repository,
// zb-h1-quick-start; pipeline_schedules.md 2.4): 1F1B's warmup; rank r > 0 splits the
// backward of its first r steady iterations and of the last one, deferring their W's; every
// cooldown backward is split; after each split backward from the last steady iteration on,
// the oldest deferred W runs; the rest run at the end. Rank 0 never splits.
std::vector<Task> zb_h1(int p, int r, int m) {
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
    out.push_back(fwd(j, 0, p, r));
  }
  for (int i = 0; i < steady; ++i) {
    out.push_back(fwd(warmup + i, 0, p, r));
    bool last = i == steady - 1;
    if (r > 0 && (i < r || last)) {
      split_b(i, last);
    } else {
      out.push_back(bwd(i, 0, p, r));
    }
  }
  for (int j = steady; j < m; ++j) {
    if (r > 0) {
      split_b(j, true);
    } else {
      out.push_back(bwd(j, 0, p, r));
    }
  }
  while (next_w < deferred.size()) {
    out.push_back(split(Task::kWeight, deferred[next_w++], r));
  }
  return out;
}

// DualPipeV (DeepSeek DualPipe repository, dualpipev.py step(); pipeline_schedules.md
// 2.8): eight phases over the V placement, forward/backward pairs overlapped in the steady
// state, zero-bubble splitting in the second half of the cooldown.
class DualPipeV {
 public:
  DualPipeV(int n, int r, int m) : n_(n), r_(r), m_(m) {}
  std::vector<Task> order();

 private:
  [[nodiscard]] int stage(int chunk) const { return chunk == 0 ? r_ : 2 * n_ - 1 - r_; }
  void f(int chunk, bool paired = false) {
    out_.push_back({Task::kForward, f_mb_[chunk]++, chunk, stage(chunk), paired});
  }
  void b(int chunk, bool split = false) {
    out_.push_back(
        {split ? Task::kBackwardInput : Task::kBackward, b_mb_[chunk], chunk, stage(chunk), false});
    if (split) {
      deferred_.emplace_back(b_mb_[chunk], chunk);
    }
    ++b_mb_[chunk];
  }
  void w() {
    auto [mb, chunk] = deferred_[next_w_++];
    out_.push_back({Task::kWeight, mb, chunk, stage(chunk), false});
  }
  void pair(int f_chunk, int b_chunk) {
    f(f_chunk, true);
    b(b_chunk);
  }

  int n_, r_, m_;
  std::array<int, 2> f_mb_{0, 0};
  std::array<int, 2> b_mb_{0, 0};
  std::vector<std::pair<int, int>> deferred_;
  std::size_t next_w_ = 0;
  std::vector<Task> out_;
};

std::vector<Task> DualPipeV::order() {
  const int rest = n_ - r_ - 1;
  for (int i = 0; i < 2 * rest; ++i) {  // 1: F0 warmup
    f(0);
  }
  for (int i = 0; i <= r_; ++i) {  // 2: F0 F1
    f(0);
    f(1);
  }
  for (int i = 0; i < rest; ++i) {  // 3: B1 (split) W F1
    b(1, true);
    w();
    f(1);
  }
  for (int i = 0; i < m_ - 2 * n_ + r_ + 1; ++i) {  // 4: (F0&B1) (F1&B0)
    if (i == 0 && r_ == n_ - 1) {  // the last rank's first iteration is not overlapped
      f(0);
      b(1);
    } else {
      pair(0, 1);
    }
    pair(1, 0);
  }
  for (int i = 0; i < rest; ++i) {  // 5: B1 (F1&B0)
    b(1);
    pair(1, 0);
  }
  bool zb = false;
  for (int i = 0; i <= r_; ++i) {  // 6: B1 B0, zero bubble from the middle on
    zb = zb || (i == (r_ + 1) / 2 && r_ % 2 == 1);
    b(1, zb);
    zb = zb || (i == (r_ + 1) / 2 && r_ % 2 == 0);
    b(0, zb);
  }
  for (int i = 0; i < rest; ++i) {  // 7: W B0 (split)
    w();
    b(0, true);
  }
  while (next_w_ < deferred_.size()) {  // 8: the remaining W
    w();
  }
  return out_;
}

int group_size(const ScheduleConfig& cfg, int p) {
  return cfg.group > 0 ? static_cast<int>(cfg.group) : p;
}

}  // namespace

void check_schedule(const ScheduleConfig& cfg, int stages, int microbatches) {
  if (cfg.kind == ScheduleKind::kDualPipeV && microbatches < 2 * stages) {
    throw base::InputError(
        fmt::format("DualPipeV needs at least 2*pp = {} microbatches per replica, got {}",
                    2 * stages, microbatches));
  }
  if (cfg.kind != ScheduleKind::kInterleaved) {
    return;
  }
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

std::vector<Task> stage_order(const ScheduleConfig& cfg, int stages, int stage, int microbatches) {
  switch (cfg.kind) {
    case ScheduleKind::kGpipe:
      return gpipe(stages, stage, microbatches);
    case ScheduleKind::k1F1B:
      return one_f_one_b(stages, stage, microbatches);
    case ScheduleKind::kInterleaved:
      check_schedule(cfg, stages, microbatches);
      return interleaved(stages, stage, microbatches, static_cast<int>(cfg.chunks),
                         group_size(cfg, stages));
    case ScheduleKind::kZbH1:
      return zb_h1(stages, stage, microbatches);
    case ScheduleKind::kDualPipeV:
      check_schedule(cfg, stages, microbatches);
      return DualPipeV(stages, stage, microbatches).order();
  }
  return {};
}

bool splits_backward(ScheduleKind kind) {
  return kind == ScheduleKind::kZbH1 || kind == ScheduleKind::kDualPipeV;
}

Placement::Placement(const ScheduleConfig& cfg, int ranks)
    : v_shape_(cfg.kind == ScheduleKind::kDualPipeV),
      ranks_(ranks),
      chunks_(v_shape_ ? 2 : static_cast<int>(std::max<std::int64_t>(cfg.chunks, 1))),
      stages_(chunks_ * ranks) {}

int Placement::stage_of(int rank, int chunk) const {
  if (v_shape_) {
    return chunk == 0 ? rank : 2 * ranks_ - 1 - rank;
  }
  return chunk * ranks_ + rank;
}

int Placement::rank_of(int stage) const {
  if (v_shape_) {
    return stage < ranks_ ? stage : 2 * ranks_ - 1 - stage;
  }
  return stage % ranks_;
}

int Placement::chunk_of(int stage) const {
  if (v_shape_) {
    return stage < ranks_ ? 0 : 1;
  }
  return stage / ranks_;
}

std::vector<Task> stage_order(ScheduleKind kind, int stages, int stage, int microbatches) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  return stage_order(cfg, stages, stage, microbatches);
}

std::string to_string(const std::vector<Task>& order, bool with_stage, char stage_letter) {
  std::string out;
  for (const Task& t : order) {
    constexpr std::string_view kLetters = "FBbw";
    bool second_of_pair = !out.empty() && out.back() == '&';
    out += (out.empty() || second_of_pair ? "" : " ") + std::string(t.paired ? "[" : "") +
           std::string(1, kLetters[t.kind]) + std::to_string(t.microbatch);
    if (with_stage) {
      out += std::string(1, stage_letter) + std::to_string(t.stage);
    }
    out += t.paired ? "&" : (second_of_pair ? "]" : "");
  }
  return out;
}

}  // namespace tessera::synth::schedule
