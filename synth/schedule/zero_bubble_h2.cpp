// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/zero_bubble_h2.h"

#include <fmt/format.h>

#include <cstddef>
#include <deque>

#include "base/error.h"

namespace tessera::synth::schedule {

namespace {

constexpr int kNotYet = -1;

// One rank of the unit-cost greedy. Forwards and input-gradient backwards go in microbatch
// order: b(s, j) waits for b(s+1, j) (or F(p-1, j)), which its neighbour runs in order, so the
// next one is the only candidate.
struct RankState {
  int next_f = 0;
  int next_b = 0;
  int in_flight = 0;     // forwards whose weight gradient has not run
  std::deque<int> wait;  // deferred weight gradients, FIFO
  std::vector<int> f_end;
  std::vector<int> b_end;
};

bool done_by(int end, int t) {
  return end != kNotYet && end <= t;
}

}  // namespace

std::vector<std::vector<Task>> zb_h2_orders(int p, int m) {
  const int cap = 2 * p - 1;
  std::vector<RankState> ranks(static_cast<std::size_t>(p));
  for (RankState& st : ranks) {
    st.f_end.assign(static_cast<std::size_t>(m), kNotYet);
    st.b_end.assign(static_cast<std::size_t>(m), kNotYet);
  }
  std::vector<std::vector<Task>> orders(static_cast<std::size_t>(p));
  auto at = [](const std::vector<int>& v, int j) { return v[static_cast<std::size_t>(j)]; };
  std::size_t left = 3 * static_cast<std::size_t>(p) * static_cast<std::size_t>(m);
  for (int t = 0; left > 0; ++t) {  // every op takes one time unit, [t, t+1)
    std::size_t ran = 0;
    for (int r = 0; r < p; ++r) {
      RankState& st = ranks[static_cast<std::size_t>(r)];
      auto& out = orders[static_cast<std::size_t>(r)];
      const int j_b = st.next_b;
      const int j_f = st.next_f;
      if (j_b < m && done_by(r == p - 1 ? at(st.f_end, j_b)
                                        : at(ranks[static_cast<std::size_t>(r + 1)].b_end, j_b),
                             t)) {
        out.push_back({Task::kBackwardInput, j_b, 0, r});
        st.b_end[static_cast<std::size_t>(j_b)] = t + 1;
        st.wait.push_back(j_b);
        ++st.next_b;
      } else if (j_f < m && st.in_flight < cap &&
                 (r == 0 || done_by(at(ranks[static_cast<std::size_t>(r - 1)].f_end, j_f), t))) {
        out.push_back({Task::kForward, j_f, 0, r});
        st.f_end[static_cast<std::size_t>(j_f)] = t + 1;
        ++st.in_flight;
        ++st.next_f;
      } else if (!st.wait.empty()) {
        out.push_back({Task::kWeight, st.wait.front(), 0, r});
        st.wait.pop_front();
        --st.in_flight;
      } else {
        continue;
      }
      ++ran;
    }
    if (ran == 0) {  // nothing runs and nothing is running: the greedy is stuck
      throw base::InternalError(
          fmt::format("the ZB-H2 greedy stalls at time {} with p={}, m={}", t, p, m));
    }
    left -= ran;
  }
  return orders;
}

}  // namespace tessera::synth::schedule
