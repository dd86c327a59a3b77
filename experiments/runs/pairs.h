// SPDX-License-Identifier: Apache-2.0
// Pairs of runs of a runs file whose scenarios differ in one or two keys, or in none (the same
// configuration measured twice): what the measurements say one change does, beside what the
// simulator predicts it does (docs/runs.md §4). A pair's error isolates the change's
// mechanism from everything the two runs share.
#pragma once

#include <string>
#include <vector>

#include "experiments/runs/evaluate.h"

namespace tessera::experiments::runs {

// One scenario key that differs: its dotted path and both values ("" where a scenario does
// not set it).
struct Difference {
  std::string key;
  std::string first;
  std::string second;
};

struct RunPair {
  const RunResult* first = nullptr;  // earlier in the file
  const RunResult* second = nullptr;
  std::vector<Difference> differences;  // in key order; empty: the same configuration

  // The second run's step time over the first's, measured and predicted.
  [[nodiscard]] double measured_ratio() const { return second->measured_s / first->measured_s; }
  [[nodiscard]] double predicted_ratio() const { return second->predicted_s / first->predicted_s; }
  // Signed: predicted ratio over measured, minus one (< 0: the prediction makes the change
  // cheaper, or more of a gain, than the measurements do).
  [[nodiscard]] double error() const { return predicted_ratio() / measured_ratio() - 1.0; }
};

// Every pair of simulated runs whose scenarios differ in at most `most` keys, in file order of
// the first run, then of the second. A scenario's keys: the corpus schema's whole scenario
// (`scenario_text`, the name aside), or the scenario file a run names and its overrides.
std::vector<RunPair> run_pairs(const std::vector<RunResult>& results, int most = 2);

}  // namespace tessera::experiments::runs
