// SPDX-License-Identifier: Apache-2.0
// Splits a trace into training iterations and measures each one. An iteration is the window
// of a ProfilerStep#N annotation (to the next step's start; the last one to its own end);
// a GPU activity belongs to the iteration in which the CPU launched it (the runtime call
// with its correlation id), or, without a launch record, in which it started on the GPU.
// Without ProfilerStep annotations the whole trace is one iteration (and `note` says so).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "measured/kineto_trace.h"

namespace tessera::measured {

struct CommTotals {
  std::int64_t count = 0;
  std::int64_t bytes = 0;         // over the kernels whose size is recorded
  std::int64_t unknown_size = 0;  // kernels without In/Out msg nelems
  std::int64_t time_ns = 0;
};

struct Iteration {
  std::int64_t step = -1;                 // N of ProfilerStep#N, -1 for the whole trace
  std::int64_t begin_ns = 0;              // annotation start
  std::int64_t end_ns = 0;                // annotation end (CPU)
  std::int64_t window_end_ns = 0;         // where launches stop counting for this iteration
  std::vector<std::uint32_t> activities;  // KinetoTrace::gpu indices, by GPU start time
  std::int64_t gpu_begin_ns = 0;          // first activity start
  std::int64_t gpu_end_ns = 0;            // last activity end
  std::array<std::int64_t, kNumCategories> count{};
  std::array<std::int64_t, kNumCategories> time_ns{};  // summed activity durations
  std::array<CommTotals, kNumCommTypes> comm{};
  // Measured iteration time: from the annotation's start until both the CPU step and the
  // GPU work launched in it have finished.
  [[nodiscard]] std::int64_t span_ns() const { return std::max(end_ns, gpu_end_ns) - begin_ns; }
};

struct IterationSet {
  std::vector<Iteration> iterations;
  bool from_annotations = false;
  std::int64_t unassigned = 0;  // GPU activities outside every iteration
  std::string note;             // how iterations were found, for reports
};

// correlation id -> KinetoTrace::runtime index, for the calls that have one.
std::unordered_map<std::int64_t, std::uint32_t> runtime_by_correlation(const KinetoTrace& t);

IterationSet find_iterations(const KinetoTrace& t);

}  // namespace tessera::measured
