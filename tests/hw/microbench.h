// SPDX-License-Identifier: Apache-2.0
// Reading calibration/microbench/*.yaml tables in reproduction tests, and printing and
// scoring a model against one (predicted, measured, error per row; held-out rows marked).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace tessera::testing {

// One table of a microbench file: its column names and rows (YAML nodes, null where the
// source has no value).
struct MicrobenchTable {
  std::string id;
  std::vector<std::string> columns;
  std::vector<YAML::Node> rows;
  [[nodiscard]] int column(const std::string& name) const;  // index; fails the test if absent
  [[nodiscard]] double num(std::size_t row, const std::string& name) const;
  [[nodiscard]] std::string str(std::size_t row, const std::string& name) const;
  [[nodiscard]] bool has(std::size_t row, const std::string& name) const;  // not null
};

// `file` relative to calibration/microbench/ in the source tree.
MicrobenchTable load_microbench(const std::string& file, const std::string& id);
// The whole entry (for scalar entries: `value`, `shape`).
YAML::Node load_microbench_entry(const std::string& file, const std::string& id);

// Held out of every fit (calibration/fit/fit_compute.py): every 4th row of a table.
constexpr bool held_out(std::size_t row) {
  return row % 4 == 3;
}

struct ReproRow {
  std::string label;
  double measured = 0.0;
  double predicted = 0.0;
  bool held_out = false;
};

struct ReproScore {
  double mean_held_out = 0.0;  // mean |predicted/measured - 1| over held-out rows
  double max_held_out = 0.0;
  double mean_fit = 0.0;  // over the other rows
  int held_out_rows = 0;
};

// Prints every row (label, measured, predicted, error, H for held out) and the score.
ReproScore report(const std::string& title, const std::string& unit,
                  const std::vector<ReproRow>& rows);

}  // namespace tessera::testing
