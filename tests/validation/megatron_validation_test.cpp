// SPDX-License-Identifier: Apache-2.0
// Runs every case of a100_megatron.yaml (published A100 measurements: Narayanan et al. SC'21
// Table 1; Korthikanti et al. 2022 Table 5 and its memory table) through the whole pipeline and
// prints predicted against measured with the error of each case. The README's validation
// table is this output. The assertions only catch a broken pipeline (every case simulated,
// errors finite and below 50%); the errors themselves are reported, not tuned.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/validation/megatron_cases.h"

namespace tessera {
namespace {

using validation::Row;

double mean_abs_error(const std::vector<Row>& rows) {
  double sum = 0.0;
  for (const Row& r : rows) {
    sum += std::abs(r.error());
  }
  return sum / static_cast<double>(rows.size());
}

std::string table(const std::vector<Row>& rows) {
  std::string out =
      "| case | metric | predicted | measured | error | note |\n|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    out += fmt::format("| {} | {} | {:.3g} | {:.3g} | {:+.1f}% | {} |\n", r.id, r.metric,
                       r.predicted, r.measured, 100.0 * r.error(), r.note);
  }
  out += fmt::format("\nmean absolute error over {} rows: {:.1f}%\n", rows.size(),
                     100.0 * mean_abs_error(rows));
  return out;
}

// One line per row (case, metric, predicted, measured) and a last line with the mean error,
// at full precision: the golden form of the table.
std::string golden_csv(const std::vector<Row>& rows) {
  std::string out = "case,metric,predicted,measured\n";
  for (const Row& r : rows) {
    out += fmt::format("{},\"{}\",{:.17g},{:.17g}\n", r.id, r.metric, r.predicted, r.measured);
  }
  out += fmt::format("all,mean absolute error,{:.17g},0\n", mean_abs_error(rows));
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

// The number after the last comma but one (the predicted column), or the whole line.
double predicted_of(const std::string& line) {
  std::size_t last = line.rfind(',');
  std::size_t before = line.rfind(',', last - 1);
  return std::stod(line.substr(before + 1, last - before - 1));
}

void expect_matches_golden(const std::string& now) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/golden/validation.csv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << ": run scripts/regen-golden.sh";
  std::ostringstream golden;
  golden << in.rdbuf();
  std::vector<std::string> want = lines(golden.str());
  std::vector<std::string> got = lines(now);
  ASSERT_EQ(want.size(), got.size()) << "the validation table has other rows than " << path;
  for (std::size_t i = 1; i < want.size(); ++i) {
    std::string want_key = want[i].substr(0, want[i].rfind(',', want[i].rfind(',') - 1));
    std::string got_key = got[i].substr(0, got[i].rfind(',', got[i].rfind(',') - 1));
    ASSERT_EQ(want_key, got_key) << "line " << i + 1 << " of " << path;
    double a = predicted_of(want[i]);
    double b = predicted_of(got[i]);
    EXPECT_NEAR(a, b, 1e-9 * std::max(std::abs(a), std::abs(b)))
        << want_key << " moved from its golden value (regenerate on purpose: "
        << "scripts/regen-golden.sh)";
  }
}

TEST(Validation, MegatronA100) {
  YAML::Node doc =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/tests/validation/a100_megatron.yaml");
  std::vector<Row> rows = validation::megatron_rows(doc, models::Effects{});
  std::string t = table(rows);
  std::cout << t;
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/validation_table.md") << t;
  std::string csv = golden_csv(rows);
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/validation.csv") << csv;
  EXPECT_EQ(rows.size(), 10u + 4u * 7u);
  for (const Row& r : rows) {
    EXPECT_TRUE(std::isfinite(r.predicted) && r.predicted > 0.0) << r.id << " " << r.metric;
    EXPECT_LT(std::abs(r.error()), 0.5) << r.id << " " << r.metric << ": the pipeline is broken";
  }
  expect_matches_golden(csv);
}

}  // namespace
}  // namespace tessera
