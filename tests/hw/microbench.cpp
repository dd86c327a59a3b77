// SPDX-License-Identifier: Apache-2.0
#include "tests/hw/microbench.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tessera::testing {

int MicrobenchTable::column(const std::string& name) const {
  auto it = std::find(columns.begin(), columns.end(), name);
  EXPECT_NE(it, columns.end()) << id << " has no column " << name;
  return it == columns.end() ? 0 : static_cast<int>(it - columns.begin());
}

double MicrobenchTable::num(std::size_t row, const std::string& name) const {
  return rows[row][column(name)].as<double>();
}

std::string MicrobenchTable::str(std::size_t row, const std::string& name) const {
  return rows[row][column(name)].as<std::string>();
}

bool MicrobenchTable::has(std::size_t row, const std::string& name) const {
  return !rows[row][column(name)].IsNull();
}

YAML::Node load_microbench_entry(const std::string& file, const std::string& id) {
  YAML::Node doc =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/calibration/microbench/" + file);
  for (const YAML::Node& entry : doc) {
    if (entry["id"].as<std::string>() == id) {
      return entry;
    }
  }
  ADD_FAILURE() << file << " has no entry " << id;
  return {};
}

MicrobenchTable load_microbench(const std::string& file, const std::string& id) {
  YAML::Node entry = load_microbench_entry(file, id);
  MicrobenchTable t;
  t.id = id;
  if (entry) {
    for (const YAML::Node& c : entry["table"]["columns"]) {
      t.columns.push_back(c.as<std::string>());
    }
    for (const YAML::Node& r : entry["table"]["rows"]) {
      t.rows.push_back(r);
    }
  }
  EXPECT_FALSE(t.rows.empty()) << file << " has no table " << id;
  return t;
}

ReproScore report(const std::string& title, const std::string& unit,
                  const std::vector<ReproRow>& rows) {
  ReproScore s;
  double fit_sum = 0.0;
  int fit_rows = 0;
  std::string out = fmt::format("{}\n  {:<34} {:>10} {:>10} {:>8}\n", title, "row", "measured",
                                "predicted", "error");
  for (const ReproRow& r : rows) {
    double err = r.predicted / r.measured - 1.0;
    out += fmt::format("  {:<34} {:>10.1f} {:>10.1f} {:>+7.1f}% {}\n", r.label, r.measured,
                       r.predicted, 100.0 * err, r.held_out ? "H" : "");
    if (r.held_out) {
      s.mean_held_out += std::abs(err);
      s.max_held_out = std::max(s.max_held_out, std::abs(err));
      ++s.held_out_rows;
    } else {
      fit_sum += std::abs(err);
      ++fit_rows;
    }
  }
  s.mean_held_out /= std::max(s.held_out_rows, 1);
  s.mean_fit = fit_sum / std::max(fit_rows, 1);
  out += fmt::format(
      "  ({}) held out (H): {} rows, mean |error| {:.1f}%, max {:.1f}%; fitted rows: mean "
      "|error| {:.1f}%\n",
      unit, s.held_out_rows, 100.0 * s.mean_held_out, 100.0 * s.max_held_out, 100.0 * s.mean_fit);
  std::printf("%s", out.c_str());
  return s;
}

}  // namespace tessera::testing
