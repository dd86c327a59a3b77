// SPDX-License-Identifier: Apache-2.0
#include "measured/iterations.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace tessera::measured {

namespace {

// Totals saturate instead of overflowing: a corrupt trace's durations (each bounded by the
// reader) could still add up past int64.
std::int64_t sum(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::max() : r;
}

}  // namespace

std::unordered_map<std::int64_t, std::uint32_t> runtime_by_correlation(const KinetoTrace& t) {
  std::unordered_map<std::int64_t, std::uint32_t> m;
  m.reserve(t.runtime.size());
  for (std::size_t i = 0; i < t.runtime.size(); ++i) {
    if (t.runtime[i].correlation >= 0) {
      m.emplace(t.runtime[i].correlation, static_cast<std::uint32_t>(i));
    }
  }
  return m;
}

IterationSet find_iterations(const KinetoTrace& t) {
  auto launch = runtime_by_correlation(t);
  // When an activity counts: its launch, or its start without a launch record.
  auto key_of = [&](const GpuActivity& a) {
    auto l = launch.find(a.correlation);
    return l != launch.end() ? t.runtime[l->second].ts_ns : a.ts_ns;
  };
  IterationSet set;
  set.from_annotations = !t.steps.empty();
  if (set.from_annotations) {
    for (std::size_t i = 0; i < t.steps.size(); ++i) {
      Iteration it;
      it.step = t.steps[i].step;
      it.begin_ns = t.steps[i].ts_ns;
      it.end_ns = t.steps[i].ts_ns + t.steps[i].dur_ns;
      it.window_end_ns = i + 1 < t.steps.size() ? t.steps[i + 1].ts_ns : it.end_ns;
      set.iterations.push_back(std::move(it));
    }
    set.note = fmt::format("{} iterations from ProfilerStep annotations", t.steps.size());
  } else {
    Iteration it;
    it.begin_ns = std::numeric_limits<std::int64_t>::max();
    it.end_ns = std::numeric_limits<std::int64_t>::min();
    for (const GpuActivity& a : t.gpu) {
      // From the first launch, so that no activity is left out.
      it.begin_ns = std::min({it.begin_ns, a.ts_ns, key_of(a)});
      it.end_ns = std::max(it.end_ns, a.end_ns());
    }
    it.window_end_ns = std::numeric_limits<std::int64_t>::max();
    set.iterations.push_back(std::move(it));
    set.note = "no ProfilerStep annotations: the whole trace is treated as one iteration";
  }
  auto& its = set.iterations;
  for (std::size_t i = 0; i < t.gpu.size(); ++i) {
    const GpuActivity& a = t.gpu[i];
    std::int64_t key = key_of(a);
    // The last iteration whose begin is <= key.
    auto pos = std::upper_bound(its.begin(), its.end(), key,
                                [](std::int64_t k, const Iteration& x) { return k < x.begin_ns; });
    if (pos == its.begin()) {
      ++set.unassigned;
      continue;
    }
    Iteration& it = *(pos - 1);
    if (key >= it.window_end_ns) {
      ++set.unassigned;
      continue;
    }
    it.activities.push_back(static_cast<std::uint32_t>(i));
  }
  for (Iteration& it : its) {
    std::sort(it.activities.begin(), it.activities.end(), [&t](std::uint32_t a, std::uint32_t b) {
      return t.gpu[a].ts_ns != t.gpu[b].ts_ns ? t.gpu[a].ts_ns < t.gpu[b].ts_ns : a < b;
    });
    it.gpu_begin_ns = it.activities.empty() ? it.begin_ns : t.gpu[it.activities.front()].ts_ns;
    it.gpu_end_ns = it.begin_ns;
    for (std::uint32_t i : it.activities) {
      const GpuActivity& a = t.gpu[i];
      it.gpu_end_ns = std::max(it.gpu_end_ns, a.end_ns());
      auto c = static_cast<std::size_t>(a.category);
      ++it.count[c];
      it.time_ns[c] = sum(it.time_ns[c], a.dur_ns);
      if (a.comm >= 0) {
        const CommArgs& args = t.comms[static_cast<std::size_t>(a.comm)];
        CommTotals& ct = it.comm[static_cast<std::size_t>(args.type)];
        ++ct.count;
        ct.time_ns = sum(ct.time_ns, a.dur_ns);
        if (std::int64_t b = args.bytes(); b >= 0) {
          ct.bytes = sum(ct.bytes, b);
        } else {
          ++ct.unknown_size;
        }
      }
    }
  }
  return set;
}

}  // namespace tessera::measured
