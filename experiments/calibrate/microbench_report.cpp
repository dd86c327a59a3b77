// SPDX-License-Identifier: Apache-2.0
// What `tessera calibrate FITS.yaml` writes: the calibrated profile and the report of each fit
// (its values, every row's error before and after, the held-out error).
#include <fmt/format.h>

#include "experiments/calibrate/microbench.h"

namespace tessera::experiments::calibrate {

namespace {

std::string percent(double x) {
  return fmt::format("{:+.1f}%", 100.0 * x);
}

std::string unit_of(const Measurement& m) {
  return m.model == KernelModel::kMemory ? "GB/s" : "TFLOP/s";
}

std::string summary(const FitOutcome& f) {
  const RowErrors a = row_errors(f.rows, false);
  const RowErrors b = row_errors(f.rows, true);
  if (f.values.empty()) {
    return fmt::format("{} rows checked, nothing fitted: mean |error| {:.1f}%", a.fit_rows,
                       100.0 * a.fit_mean);
  }
  return fmt::format(
      "{} rows fitted: mean |error| {:.1f}% -> {:.1f}%; {} held out: {:.1f}% -> {:.1f}% (max "
      "{:.1f}%)",
      a.fit_rows, 100.0 * a.fit_mean, 100.0 * b.fit_mean, a.held_rows, 100.0 * a.held_mean,
      100.0 * b.held_mean, 100.0 * b.held_max);
}

std::string rows_table(const FitOutcome& f) {
  std::string out =
      "| table | row | measured | start | error | fitted | error | |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const RowFit& r : f.rows) {
    const Measurement& m = r.row;
    out += fmt::format("| {} | {} | {:.4g} {} | {:.4g} | {} | {:.4g} | {} | {} |\n", m.table,
                       m.label, m.measured, unit_of(m), r.start, percent(r.start / m.measured - 1),
                       r.fitted, percent(r.fitted / m.measured - 1),
                       m.held_out ? "held out" : (m.fitted ? "" : "not fitted"));
  }
  return out;
}

// Whose fits ran, when they are not the base's own.
std::string of(const MicrobenchCalibration& c) {
  return c.fits_of == c.base ? "" : fmt::format(" (the fits of {}, which it extends)", c.fits_of);
}

}  // namespace

std::string microbench_profile_yaml(const MicrobenchCalibration& c, const std::string& name,
                                    const std::string& path) {
  std::string out = fmt::format(
      "# {} calibrated by `tessera calibrate {} --profile {}` on microbenchmarks{} "
      "(docs/calibration.md):\n",
      c.base, path, c.base, of(c));
  std::vector<ParameterValue> values;
  for (const FitOutcome& f : c.fits) {
    out += fmt::format("#   {}: {}.\n", f.name, summary(f));
    values.insert(values.end(), f.values.begin(), f.values.end());
  }
  out += fmt::format("name: {}\nextends: {}\ndescription: \"{} calibrated on {}\"\n", name, c.base,
                     c.base, path);
  return out + values_yaml(values, c.fitted);
}

std::string microbench_report(const MicrobenchCalibration& c) {
  std::string out = fmt::format("microbenchmark calibration of {}{}\n", c.base, of(c));
  for (const FitOutcome& f : c.fits) {
    out += fmt::format("\n## {} ({} iterations)\n\n", f.name, f.iterations);
    if (!f.values.empty()) {
      out += parameters_table(f.values) + "\n";
    }
    out += rows_table(f) + "\n" + summary(f) + "\n";
  }
  return out;
}

}  // namespace tessera::experiments::calibrate
