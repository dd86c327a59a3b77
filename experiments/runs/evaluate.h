// SPDX-License-Identifier: Apache-2.0
// Every run of a runs file simulated and set beside its measurement, and the errors summed up
// by group (source, hardware, precision): the corpus table of the README (docs/runs.md §4).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "experiments/runs/runs_file.h"

namespace tessera::experiments::runs {

struct RunResult {
  const Run* run = nullptr;
  bool simulated = false;
  std::string failure;  // a run that could not finish its simulation
  double predicted_s = 0.0;
  double measured_s = 0.0;
  double mfu = 0.0;             // predicted, Megatron's convention
  double peak_hbm_bytes = 0.0;  // predicted, the largest rank's
  double hbm_capacity_bytes = 0.0;
  // Signed: predicted over measured step time, minus one (< 0: the prediction is faster,
  // "optimistic").
  [[nodiscard]] double error() const { return predicted_s / measured_s - 1.0; }
};

// Simulates every run that can be, `jobs` at a time (0: every core); results in file order,
// the same for any `jobs`.
std::vector<RunResult> evaluate(const RunsFile& file, int jobs = 0);

struct GroupStats {
  std::string name;
  int count = 0;
  double median_abs = 0.0;
  double max_abs = 0.0;
  double mean_signed = 0.0;
  int optimistic = 0;  // predicted faster than measured
};

// The simulated results grouped by `key` (groups in order of name), then one row "all".
std::vector<GroupStats> group_stats(const std::vector<RunResult>& results,
                                    const std::function<std::string(const Run&)>& key);

}  // namespace tessera::experiments::runs
