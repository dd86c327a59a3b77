// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/skeletons/eight_phases.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tessera::synth::schedule {

namespace {

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

// Runs kEightPhases for one rank.
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

}  // namespace

std::vector<Task> eight_phase_order(int n, int h, int m, bool swap, std::array<int, 2> stage) {
  return EightPhases(n, h, m, swap, stage).run();
}

}  // namespace tessera::synth::schedule
