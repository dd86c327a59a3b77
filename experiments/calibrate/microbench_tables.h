// SPDX-License-Identifier: Apache-2.0
// The microbenchmark tables of a folder (calibration/microbench/*.yaml, schema in its README):
// each entry by id, with its columns and rows, or a scalar `value` with a `shape`. Internal to
// the microbenchmark fits (microbench.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/yaml_reader.h"

namespace tessera::experiments::calibrate {

// A table, or a scalar entry read as a table of one row whose columns are its shape's keys and
// `value`.
struct MicrobenchEntry {
  std::string id;
  bool scalar = false;
  std::vector<std::string> columns;
  std::vector<std::vector<base::YamlNode>> rows;  // one cell per column
  // The column's index; fails at `at` (the fits file's reference) when there is none.
  [[nodiscard]] std::size_t column(const std::string& name, const base::YamlNode& at) const;
  // The cell, or nullopt when the source gives no value (null).
  [[nodiscard]] std::optional<base::YamlNode> cell(std::size_t row, std::size_t column) const;
};

class MicrobenchTables {
 public:
  // Every entry of the *.yaml files of `folder` that hold a list of entries, in file order.
  explicit MicrobenchTables(const std::string& folder);
  // The entry `id`; fails at `at` (with the nearest id as a hint) when there is none.
  [[nodiscard]] const MicrobenchEntry& at(const base::YamlNode& at) const;

 private:
  std::string folder_;
  std::map<std::string, MicrobenchEntry> entries_;
};

}  // namespace tessera::experiments::calibrate
