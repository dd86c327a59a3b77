// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "base/error.h"
#include "synth/schedule/zero_bubble_h2.h"

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

// The eight-phase program of DeepSeek's DualPipe and DualPipeV step() (DualPipe repository,
// dualpipe.py and dualpipev.py; pipeline_schedules.md 2.7 and 2.8), as data. Both run the
// same program over a "half pipeline" of n ranks, in which this rank sits h ranks from the
// end where its chunk-0 microbatches enter, with m microbatches per chunk:
//  - DualPipeV: n = N, h = r, m = M; chunk 0 is the V's ascending leg, chunk 1 the other.
//  - DualPipe: n = N/2, h = min(r, N-1-r), m = M/2; chunk 0 is pipe A and chunk 1 pipe B on
//    the first half of the ranks, swapped on the second half ("phase ^= is_in_second_half").
// Ops name the logical chunk: F0 = forward of chunk 0, B1 = whole backward of chunk 1, etc.
enum class Count : unsigned char {
  kTwiceRest,  // 2(n-h-1)
  kUpToHere,   // h+1
  kRest,       // n-h-1
  kMain,       // m-2n+h+1 (DualPipe: M/2-N+hr+1)
};
enum class Op : unsigned char {
  kF0,
  kF1,
  kB1,
  kB0Split,  // input gradient now, weight gradient deferred (zero bubble)
  kB1Split,
  kB0Late,  // phase 6: split from the middle iteration on ("ZB turns on halfway")
  kB1Late,
  kW,     // the oldest deferred weight gradient
  kF0B1,  // overlapped pair; not overlapped in the innermost rank's first main iteration
  kF1B0,  // overlapped pair
};
struct Phase {
  Count count;
  std::array<Op, 3> ops;
  std::size_t size;
};
constexpr std::array<Phase, 8> kEightPhases = {{
    {Count::kTwiceRest, {Op::kF0}, 1},                   // 1: nF0
    {Count::kUpToHere, {Op::kF0, Op::kF1}, 2},           // 2: nF0F1
    {Count::kRest, {Op::kB1Split, Op::kW, Op::kF1}, 3},  // 3: nB1W1F1 (zero bubble)
    {Count::kMain, {Op::kF0B1, Op::kF1B0}, 2},           // 4: main step, nF0B1F1B0
    {Count::kRest, {Op::kB1, Op::kF1B0}, 2},             // 5: nB1F1B0
    {Count::kUpToHere, {Op::kB1Late, Op::kB0Late}, 2},   // 6: nB1B0
    {Count::kRest, {Op::kW, Op::kB0Split}, 2},           // 7: nWB0 (zero bubble)
    {Count::kUpToHere, {Op::kW}, 1},                     // 8: nW
}};

// Runs kEightPhases for one rank. `stage` gives the virtual stage of each (actual) chunk;
// `swap` maps logical chunk c to actual chunk c ^ 1.
class EightPhases {
 public:
  EightPhases(int n, int h, int m, bool swap, std::array<int, 2> stage)
      : n_(n), h_(h), m_(m), swap_(swap ? 1 : 0), stage_(stage) {}
  std::vector<Task> run();

 private:
  [[nodiscard]] int count(Count c) const;
  void run_op(Op op, int i);
  void f(int logical, bool paired = false) {
    const int c = logical ^ swap_;
    out_.push_back({Task::kForward, f_mb_[c]++, c, stage_[c], paired});
  }
  void b(int logical, bool split = false) {
    const int c = logical ^ swap_;
    out_.push_back({split ? Task::kBackwardInput : Task::kBackward, b_mb_[c], c, stage_[c]});
    if (split) {
      deferred_.emplace_back(b_mb_[c], c);
    }
    ++b_mb_[c];
  }
  void w() {
    auto [mb, c] = deferred_[next_w_++];
    out_.push_back({Task::kWeight, mb, c, stage_[c]});
  }

  int n_, h_, m_, swap_;
  std::array<int, 2> stage_;
  std::array<int, 2> f_mb_{0, 0};
  std::array<int, 2> b_mb_{0, 0};
  std::vector<std::pair<int, int>> deferred_;  // (microbatch, chunk), FIFO
  std::size_t next_w_ = 0;
  std::vector<Task> out_;
};

int EightPhases::count(Count c) const {
  switch (c) {
    case Count::kTwiceRest:
      return 2 * (n_ - h_ - 1);
    case Count::kUpToHere:
      return h_ + 1;
    case Count::kRest:
      return n_ - h_ - 1;
    case Count::kMain:
      return m_ - 2 * n_ + h_ + 1;
  }
  return 0;
}

// Op `op` of iteration i of its phase.
void EightPhases::run_op(Op op, int i) {
  const int half = (h_ + 1) / 2;  // phase 6's middle iteration
  switch (op) {
    case Op::kF0:
      return f(0);
    case Op::kF1:
      return f(1);
    case Op::kB1:
      return b(1);
    case Op::kB0Split:
      return b(0, true);
    case Op::kB1Split:
      return b(1, true);
    case Op::kB0Late:
      return b(0, i >= half);
    case Op::kB1Late:
      return b(1, i > half || (i == half && h_ % 2 == 1));
    case Op::kW:
      return w();
    case Op::kF0B1:
      f(0, !(i == 0 && h_ == n_ - 1));  // the innermost rank: "we don't overlap" the first
      return b(1);
    case Op::kF1B0:
      f(1, true);
      return b(0);
  }
}

std::vector<Task> EightPhases::run() {
  for (const Phase& phase : kEightPhases) {
    for (int i = 0; i < count(phase.count); ++i) {
      for (std::size_t k = 0; k < phase.size; ++k) {
        run_op(phase.ops[k], i);
      }
    }
  }
  if (next_w_ != deferred_.size()) {
    throw base::InternalError(fmt::format("the eight-phase program left {} weight gradients",
                                          deferred_.size() - next_w_));
  }
  return out_;
}

// DualPipeV, section 2.8: N ranks, one V of 2N stages, M microbatches.
std::vector<Task> dualpipev(int n, int r, int m) {
  return EightPhases(n, r, m, false, {r, 2 * n - 1 - r}).run();
}

// DualPipe, section 2.7: N ranks, two pipes, M/2 microbatches each; stages as in Placement.
std::vector<Task> dualpipe(int n, int r, int m) {
  const int h = std::min(r, n - 1 - r);
  return EightPhases(n / 2, h, m / 2, r >= n / 2, {r, 2 * n - 1 - r}).run();
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
  if (cfg.kind == ScheduleKind::kDualPipe) {  // section 2.7: N even, M even and >= 2N
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
    case ScheduleKind::kZbH2:
      return zb_h2_orders(stages, microbatches)[static_cast<std::size_t>(stage)];
    case ScheduleKind::kDualPipeV:
      check_schedule(cfg, stages, microbatches);
      return dualpipev(stages, stage, microbatches);
    case ScheduleKind::kDualPipe:
      check_schedule(cfg, stages, microbatches);
      return dualpipe(stages, stage, microbatches);
  }
  return {};
}

bool splits_backward(ScheduleKind kind) {
  return kind == ScheduleKind::kZbH1 || kind == ScheduleKind::kZbH2 ||
         kind == ScheduleKind::kDualPipeV || kind == ScheduleKind::kDualPipe;
}

Placement::Placement(const ScheduleConfig& cfg, int ranks)
    : shape_(cfg.kind == ScheduleKind::kDualPipeV  ? Shape::kV
             : cfg.kind == ScheduleKind::kDualPipe ? Shape::kDual
                                                   : Shape::kFlat),
      ranks_(ranks),
      chunks_(shape_ != Shape::kFlat ? 2 : static_cast<int>(std::max<std::int64_t>(cfg.chunks, 1))),
      pipes_(shape_ == Shape::kDual ? 2 : 1),
      stages_(chunks_ * ranks) {}

// The V and DualPipe place alike (rank r: stages r and 2p-1-r); they differ in the pipes.
int Placement::stage_of(int rank, int chunk) const {
  if (shape_ != Shape::kFlat) {
    return chunk == 0 ? rank : 2 * ranks_ - 1 - rank;
  }
  return chunk * ranks_ + rank;
}

int Placement::rank_of(int stage) const {
  if (shape_ != Shape::kFlat) {
    return stage < ranks_ ? stage : 2 * ranks_ - 1 - stage;
  }
  return stage % ranks_;
}

int Placement::chunk_of(int stage) const {
  if (shape_ != Shape::kFlat) {
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
