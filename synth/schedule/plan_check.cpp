// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/plan_check.h"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>

#include "base/error.h"

namespace tessera::synth::schedule {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw base::InternalError("pipeline plan: " + what);
}

std::string where(int rank, const Task& t) {
  return fmt::format("rank {}, stage {}, microbatch {}", rank, t.stage, t.microbatch);
}

// What a task waits for (section 2.0), as (kind, stage): kForward for F's output, kBackward
// for B's or b's. Nothing for a forward at the pipe's first stage.
struct Needs {
  bool forward = false;  // the activation of F(stage), else the input gradient of B/b(stage)
  int stage = 0;
};
std::optional<Needs> needs(const Placement& place, const Task& t) {
  switch (t.kind) {
    case Task::kForward:
      if (place.first_of_pipe(t.stage)) {
        return std::nullopt;
      }
      return Needs{true, place.prev_stage(t.stage)};
    case Task::kBackward:
    case Task::kBackwardInput:
      if (place.last_of_pipe(t.stage)) {
        return Needs{true, t.stage};
      }
      return Needs{false, place.next_stage(t.stage)};
    case Task::kWeight:
      return Needs{false, t.stage};
  }
  return std::nullopt;
}

// Per (stage, microbatch): where its F, B, b and w sit in their rank's order (-1: absent).
struct Slots {
  int f = -1;
  int b = -1;  // B or b
  int w = -1;  // w, or the B itself
  int split = -1;
};

class Checker {
 public:
  Checker(const Placement& place, const Plan& plan, int m) : place_(place), plan_(plan), m_(m) {
    slots_.resize(static_cast<std::size_t>(place.stages()) * static_cast<std::size_t>(m));
  }
  void placement_and_counts();
  void executable() const;

 private:
  Slots& slot(int stage, int mb) {
    return slots_[static_cast<std::size_t>(stage) * static_cast<std::size_t>(m_) +
                  static_cast<std::size_t>(mb)];
  }
  void record(int rank, int index, const Task& t);

  const Placement& place_;
  const Plan& plan_;
  int m_;
  std::vector<Slots> slots_;
};

void Checker::record(int rank, int index, const Task& t) {
  Slots& s = slot(t.stage, t.microbatch);
  auto once = [&](int& at, const char* what) {
    if (at >= 0) {
      fail(fmt::format("{}: a second {}", where(rank, t), what));
    }
    at = index;
  };
  switch (t.kind) {
    case Task::kForward:
      once(s.f, "forward");
      return;
    case Task::kBackward:
      once(s.b, "backward");
      once(s.w, "weight gradient (within a whole backward)");
      return;
    case Task::kBackwardInput:
      once(s.b, "backward");
      s.split = index;
      return;
    case Task::kWeight:
      once(s.w, "weight gradient");
      if (s.split < 0) {
        fail(fmt::format("{}: weight gradient w without its split backward b before it",
                         where(rank, t)));
      }
      return;
  }
}

void Checker::placement_and_counts() {
  if (plan_.size() != static_cast<std::size_t>(place_.ranks())) {
    fail(fmt::format("{} rank orders for {} ranks", plan_.size(), place_.ranks()));
  }
  for (int r = 0; r < place_.ranks(); ++r) {
    const auto& order = plan_[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < order.size(); ++i) {
      const Task& t = order[i];
      if (t.stage < 0 || t.stage >= place_.stages()) {
        fail(fmt::format("{}: no such stage (the plan has {})", where(r, t), place_.stages()));
      }
      if (place_.rank_of(t.stage) != r || place_.chunk_of(t.stage) != t.chunk) {
        fail(fmt::format("{}, chunk {}: the stage is chunk {} of rank {}", where(r, t), t.chunk,
                         place_.chunk_of(t.stage), place_.rank_of(t.stage)));
      }
      if (t.microbatch < 0 || t.microbatch >= m_) {
        fail(fmt::format("{}: each pipe runs microbatches 0..{}", where(r, t), m_ - 1));
      }
      if (t.paired && (t.kind != Task::kForward || i + 1 == order.size() ||
                       order[i + 1].kind == Task::kForward || order[i + 1].kind == Task::kWeight)) {
        fail(
            fmt::format("{}: a paired task must be a forward followed by a backward", where(r, t)));
      }
      record(r, static_cast<int>(i), t);
    }
  }
  for (int s = 0; s < place_.stages(); ++s) {
    for (int j = 0; j < m_; ++j) {
      const Slots& k = slot(s, j);
      const Task t{Task::kForward, j, place_.chunk_of(s), s};
      const int r = place_.rank_of(s);
      if (k.f < 0 || k.b < 0 || k.w < 0) {
        fail(fmt::format("{} (pipe {}): missing its {}", where(r, t), place_.pipe_of(s),
                         k.f < 0   ? "forward"
                         : k.b < 0 ? "backward"
                                   : "weight gradient"));
      }
      if (k.f > k.b || (k.split >= 0 && k.split > k.w)) {
        fail(fmt::format("{} (pipe {}): runs {} on its rank", where(r, t), place_.pipe_of(s),
                         k.f > k.b ? "the backward before the forward"
                                   : "the weight gradient before the backward"));
      }
    }
  }
}

// Section 2.0's list schedule without costs: repeatedly run every rank's next step (a task,
// or a paired forward with its backward) whose inputs have been produced.
void Checker::executable() const {
  const auto n = static_cast<std::size_t>(place_.stages()) * static_cast<std::size_t>(m_);
  std::vector<char> fwd_done(n, 0);
  std::vector<char> bwd_done(n, 0);
  auto key = [this](int stage, int mb) {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(mb);
  };
  auto ready = [&](const Task& t) {
    auto need = needs(place_, t);
    return !need || (need->forward ? fwd_done : bwd_done)[key(need->stage, t.microbatch)] != 0;
  };
  std::vector<std::size_t> next(plan_.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < plan_.size(); ++r) {
      const auto& order = plan_[r];
      while (next[r] < order.size()) {
        const std::size_t len = order[next[r]].paired ? 2 : 1;
        if (!ready(order[next[r]]) || (len == 2 && !ready(order[next[r] + 1]))) {
          break;
        }
        for (std::size_t i = next[r]; i < next[r] + len; ++i) {
          const Task& t = order[i];
          if (t.kind == Task::kForward) {
            fwd_done[key(t.stage, t.microbatch)] = 1;
          } else if (t.kind != Task::kWeight) {
            bwd_done[key(t.stage, t.microbatch)] = 1;
          }
        }
        next[r] += len;
        progress = true;
      }
    }
  }
  std::string stuck;
  for (std::size_t r = 0; r < plan_.size(); ++r) {
    if (next[r] < plan_[r].size()) {
      const Task& t = plan_[r][next[r]];
      constexpr std::string_view kLetters = "FBbw";
      stuck +=
          fmt::format("{}{}{}{} ({})", stuck.empty() ? "" : "; ", kLetters[t.kind], t.microbatch,
                      t.paired ? " (paired)" : "", where(static_cast<int>(r), t));
    }
  }
  if (!stuck.empty()) {
    fail("deadlock under the rank orders, waiting: " + stuck);
  }
}

}  // namespace

Plan make_plan(const ScheduleConfig& cfg, int ranks, int microbatches) {
  Plan plan;
  for (int r = 0; r < ranks; ++r) {
    plan.push_back(stage_order(cfg, ranks, r, microbatches));
  }
  return plan;
}

void check_plan(const Placement& place, const Plan& plan, int pipe_microbatches) {
  Checker c(place, plan, pipe_microbatches);
  c.placement_and_counts();
  c.executable();
}

void check_plan(const ScheduleConfig& cfg, int ranks, int microbatches) {
  const Placement place(cfg, ranks);
  check_plan(place, make_plan(cfg, ranks, microbatches), place.pipe_microbatches(microbatches));
}

}  // namespace tessera::synth::schedule
