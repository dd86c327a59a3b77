// SPDX-License-Identifier: Apache-2.0
// Kernel models fitted to microbenchmarks (`tessera calibrate FITS.yaml --profile NAME`): a
// fits file (calibration/microbench/fits.yaml) names, per profile, the parameters each fit
// moves and the table rows that inform them; every row is predicted by the model the simulator
// runs (hwprofiles/gemm_model.h, memory_model.h, attention_model.h), and its log error is a
// residual of the same bounded fit as the runs calibration (fit.h). Every 4th row of a table
// is held out of every fit. docs/calibration.md, "Fitting kernel models to microbenchmarks".
#pragma once

#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/error.h"
#include "experiments/calibrate/calibrate.h"
#include "hwprofiles/attention_model.h"
#include "hwprofiles/gemm_model.h"
#include "hwprofiles/parameters.h"

namespace tessera::experiments::calibrate {

enum class KernelModel : unsigned char { kGemm, kMemory, kAttention };
enum class AttentionPasses : unsigned char { kForward, kBackward, kBoth };

// One measured row: what ran, its measured rate, and where the row is written.
struct Measurement {
  std::string table;  // the microbenchmark's id
  std::string label;  // the row's shape, for the report
  base::SourceLoc where;
  KernelModel model = KernelModel::kGemm;
  hw::GemmShape gemm;                      // kGemm
  base::DType dtype = base::DType::kBF16;  // kGemm: the operands (output bf16)
  double bytes = 0.0;                      // kMemory: bytes read + written
  hw::AttentionShape attention;            // kAttention
  AttentionPasses passes = AttentionPasses::kForward;
  double measured = 0.0;  // TFLOP/s (gemm, attention) or GB/s (memory)
  double weight = 1.0;
  bool held_out = false;  // every 4th row of its table
  bool fitted = true;     // false: reported, never fitted
};

// One fit of a profile: the scalars it moves (bounds narrowed as the file gives them) and its
// rows.
struct MicrobenchFit {
  std::string profile;  // the profile the file gives it for
  std::string name;
  base::SourceLoc where;
  std::vector<hw::Scalar> scalars;
  std::vector<Measurement> rows;
};

// The fits of `profile` in the fits file at `path`, in file order, with their rows read from
// the tables. A profile with none of its own takes those of its nearest ancestor that has some
// (`ancestors`, nearest first). Throws base::InputError (file:line:col) for a malformed file,
// a table or column that does not exist, or a parameter that is not a fittable scalar, and
// when no fit applies to the profile.
std::vector<MicrobenchFit> read_microbench_fits(const std::string& path, const std::string& profile,
                                                const std::vector<std::string>& ancestors);

// Whether the YAML file at `path` is a fits file (a map with a `fits` key), not a runs file.
bool is_microbench_fits(const std::string& path);

// The rate the profile's model predicts for the row, in the row's unit.
double predict(const hw::Profile& p, const Measurement& m);

// A row with the rates predicted before and after the fit.
struct RowFit {
  Measurement row;
  double start = 0.0;
  double fitted = 0.0;
};

struct FitOutcome {
  std::string name;
  std::vector<ParameterValue> values;
  std::vector<RowFit> rows;
  int iterations = 0;
};

struct MicrobenchCalibration {
  std::string base;
  std::string fits_of;  // the profile whose fits ran: the base, or one it extends
  hw::Profile fitted;
  std::vector<FitOutcome> fits;
};

// Runs the fits of `base` in `path` in order, each from the values the ones before it found.
// `only` (scalar paths) narrows the scalars fitted; a fit left with none is skipped. Throws
// base::InputError for a name in `only` that no fit moves.
MicrobenchCalibration calibrate_microbench(const std::string& path, const hw::Profile& base,
                                           const std::vector<std::string>& only);

// Mean |predicted / measured - 1| of the fitted rows and of the held-out ones (rows marked
// not fitted count in neither), at the start values or the fitted ones.
struct RowErrors {
  double fit_mean = 0.0;
  double held_mean = 0.0;
  double held_max = 0.0;
  int fit_rows = 0;
  int held_rows = 0;
};
RowErrors row_errors(const std::vector<RowFit>& rows, bool fitted);

// The calibrated profile (extends the base, gives the fitted values) and the fit report.
std::string microbench_profile_yaml(const MicrobenchCalibration& c, const std::string& name,
                                    const std::string& path);
std::string microbench_report(const MicrobenchCalibration& c);

}  // namespace tessera::experiments::calibrate
