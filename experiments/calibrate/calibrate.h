// SPDX-License-Identifier: Apache-2.0
// `tessera calibrate`: the named, global, physical parameters of one hardware profile fitted
// to the measured runs on it (docs/calibration.md Part 3). Every run is simulated at the profile
// with the parameters changed, its error in log step time is a residual, and a bounded
// Levenberg-Marquardt fit (fit.h) finds the values; each source of runs is then left out in
// turn, refitted from the others and predicted, which gives the held-out error. Deterministic:
// results come in run order whatever the number of threads.
#pragma once

#include <string>
#include <vector>

#include "experiments/runs/runs_file.h"
#include "hwprofiles/parameters.h"

namespace tessera::experiments::calibrate {

struct Options {
  std::vector<std::string> fit;  // scalar paths (hw::find_scalar); empty: every `fitted` one
  bool hold_out = true;          // leave each group of runs out in turn
  // What a group is: the runs of one source (who published them), or of one model (for
  // runs from a single source; a weaker test: the source's own setup is in every fold).
  enum class HoldOut : unsigned char { kSource, kModel };
  HoldOut hold_out_by = HoldOut::kSource;
  int jobs = 0;  // threads (0: every core)
};

struct ParameterValue {
  hw::Scalar scalar;
  double start = 0.0;  // the base profile's value (SI units)
  double value = 0.0;  // fitted; the start when the runs do not inform it
  double sigma = 0.0;  // one standard deviation
  bool informed = false;
};

// A kernel category of a traced run (GEMM, attention, norm, optimizer): its measured time per
// step on the traced rank and the predictions, as for the step.
struct CategoryResidual {
  std::string name;
  double measured_s = 0.0;
  double start_s = 0.0;
  double fitted_s = 0.0;
  double held_out_s = 0.0;
};

struct RunResidual {
  const runs::Run* run = nullptr;
  double measured_s = 0.0;
  double start_s = 0.0;     // predicted on the base profile
  double fitted_s = 0.0;    // predicted on the calibrated one
  double held_out_s = 0.0;  // predicted by the fit without the run's source (0: none)
  std::vector<CategoryResidual> categories;  // a traced run's, each a residual too
};

// One source left out: the values fitted without it, and its runs' errors.
struct Fold {
  std::string source;  // the group left out: a source, or a model
  int runs = 0;
  std::vector<double> values;  // per parameter, as `parameters`
  double median_abs = 0.0;     // of its runs' held-out errors
};

struct Calibration {
  std::string base;                    // the profile calibrated
  std::string held_out_by = "source";  // what a fold leaves out: "source" or "model"
  hw::Profile fitted;
  std::vector<ParameterValue> parameters;
  std::vector<RunResidual> runs;
  std::vector<Fold> folds;
  std::vector<std::string> left_out;  // runs of the file not used, each with why
  int iterations = 0;
  int simulations = 0;
};

// Fits `base`'s parameters to the runs of `file` on it or on a profile that extends it (each
// simulated on its own profile with the parameters changed). Throws
// base::InputError when no run can be used or a --fit name is not a fittable parameter.
Calibration calibrate(const runs::RunsFile& file, const hw::Profile& base, const Options& opt);

// The calibrated profile as a file named `name` that extends the base and gives the fitted
// values, with the fit's figures in its comments.
std::string profile_yaml(const Calibration& c, const std::string& name, const std::string& runs);
// The informed values of `values` as nested profile YAML (a map entry writes its whole map as
// `fitted` has it), each with its uncertainty and start in a comment.
std::string values_yaml(const std::vector<ParameterValue>& values, const hw::Profile& fitted);
// The values as a markdown table: start, fitted, uncertainty.
std::string parameters_table(const std::vector<ParameterValue>& values);
// The fit report: every value with its uncertainty, every run's residual, the held-out errors.
std::string report(const Calibration& c);

// The scalars `paths` name (hw::find_scalar), or with none every one the table marks
// `fitted`. Throws base::InputError for a name that is not a bounded number of the table.
std::vector<hw::Scalar> scalars_to_fit(const std::vector<std::string>& paths);

// A scalar's value as a point of [0, 1] between its bounds (clamped), and back.
double to_unit(const hw::Scalar& p, double v);
double from_unit(const hw::Scalar& p, double u);

// Errors of a list of residual rows (predicted / measured - 1): median absolute, signed mean.
double median_abs_error(const std::vector<double>& errors);

}  // namespace tessera::experiments::calibrate
