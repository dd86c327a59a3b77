// SPDX-License-Identifier: Apache-2.0
// `tessera calibrate RUNS --profile NAME --out PROFILE.yaml`: fits the profile's physical
// parameters to the measured runs on it (or its kernel models to the microbenchmarks a fits
// file names) and writes a profile that extends it, with the fit report beside it
// (experiments/calibrate/, docs/calibration.md).
#include "experiments/calibrate/calibrate.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/calibrate/microbench.h"
#include "experiments/compare_files.h"

namespace tessera::cli {

void add_calibrate_command(CLI::App& app, CalibrateArgs& a) {
  a.command = app.add_subcommand("calibrate",
                                 "fit a hardware profile's physical parameters to measured runs");
  a.command
      ->add_option("runs", a.runs,
                   "runs file (YAML corpus schema, or CSV; a run may name a Kineto trace), or a "
                   "microbenchmark fits file "
                   "(calibration/microbench/fits.yaml)")
      ->required();
  a.command->add_option("--recipes", a.recipes,
                        "runs: a recipes file, what the recipes the runs cite set where a run "
                        "does not say (tessera runs --recipes)");
  a.command->add_option("--profile", a.profile, "the profile to calibrate (name or path)")
      ->required();
  a.command->add_option("--out", a.out, "the calibrated profile to write (PROFILE.yaml)")
      ->required();
  a.command
      ->add_option("--fit", a.fit,
                   "parameters to fit (default: every one the table marks; tessera list "
                   "--parameters)")
      ->delimiter(',');
  a.command->add_flag("--no-hold-out", a.no_hold_out,
                      "runs: skip leaving each source out in turn (faster; no held-out error)");
  a.command
      ->add_option("--hold-out-by", a.hold_out_by,
                   "runs: what each fold leaves out, source (default) or model (for runs from "
                   "one source)")
      ->check(CLI::IsMember({"source", "model"}));
  a.command
      ->add_option("--jobs", a.jobs,
                   "runs: simulations at once (default: every core; a fits file runs none)")
      ->check(CLI::Range(1, 1024));
}

namespace {

namespace cal = experiments::calibrate;

// The calibrated profile's text and the report, from a microbenchmark fits file.
std::pair<std::string, std::string> fit_microbenchmarks(const CalibrateArgs& a,
                                                        const std::string& name) {
  if (a.no_hold_out || a.command->count("--hold-out-by") > 0 || !a.recipes.empty()) {
    throw base::InputError(
        fmt::format("{}: --no-hold-out, --hold-out-by and --recipes apply to runs files; a "
                    "microbenchmark "
                    "fits file always holds out every 4th row of each table",
                    a.runs));
  }
  const cal::MicrobenchCalibration c =
      cal::calibrate_microbench(a.runs, hw::load_profile(a.profile), a.fit);
  return {cal::microbench_profile_yaml(c, name, a.runs), cal::microbench_report(c)};
}

// The same from a runs file.
std::pair<std::string, std::string> fit_runs(const CalibrateArgs& a, const std::string& name) {
  if (!a.recipes.empty()) {
    check_input_file("recipes file", a.recipes);
  }
  const experiments::runs::RunsFile file = experiments::runs::read_runs(a.runs, a.recipes);
  const hw::Profile base = hw::load_profile(a.profile);
  cal::Options opt;
  opt.fit = a.fit;
  opt.hold_out = !a.no_hold_out;
  opt.hold_out_by =
      a.hold_out_by == "model" ? cal::Options::HoldOut::kModel : cal::Options::HoldOut::kSource;
  opt.jobs = a.jobs;
  const cal::Calibration c = cal::calibrate(file, base, opt);
  return {cal::profile_yaml(c, name, a.runs), cal::report(c)};
}

}  // namespace

int calibrate(const CalibrateArgs& a) {
  namespace fs = std::filesystem;
  check_input_file("runs file", a.runs);
  check_profile_arg("--profile", a.profile);
  if (!a.out.ends_with(".yaml")) {
    throw base::InputError(
        fmt::format("--out '{}': expected a profile file name ending in .yaml", a.out));
  }
  const std::string name = fs::path(a.out).stem().string();
  const std::string report_path = (fs::path(a.out).parent_path() / (name + ".fit.md")).string();
  const auto [profile, text] =
      cal::is_microbench_fits(a.runs) ? fit_microbenchmarks(a, name) : fit_runs(a, name);
  prepare_output_prefix("--out", a.out);  // only now: a refused input writes nothing
  experiments::open_for_writing(a.out) << profile;
  experiments::open_for_writing(report_path) << text;
  std::cout << text;
  fmt::print("wrote {} and {}\n", a.out, report_path);
  return 0;
}

}  // namespace tessera::cli
