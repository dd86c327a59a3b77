// SPDX-License-Identifier: Apache-2.0
// A runs file: measured training runs, each with its configuration, read into scenarios
// (docs/runs.md). Two forms:
//   - YAML in the corpus schema (tests/validation/runs/README.md): `models:` and `cases:`, each
//     case's model, training, parallelism, cluster and what was measured, as published; or a
//     case that names a `scenario:` file with `set:` overrides and its `measured:` step time;
//   - CSV with the columns id, scenario, set (key=value;key=value), step_time_s, then
//     optionally source and trace (in that header order).
// A run may name a PyTorch profiler (Kineto) trace of itself (`trace`): its kernel times by
// category calibrate too, and it gives the step time when none is written.
// A run Tessera cannot express is kept with the exact reason; a malformed file is an error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "measured/kineto_trace.h"
#include "synth/scenario/scenario.h"

namespace tessera::experiments::runs {

// What a run measured, as published.
struct Measurement {
  enum class Kind : unsigned char { kStepTime, kTokensPerSecond, kModelTflops };
  Kind kind = Kind::kStepTime;
  double value = 0.0;  // seconds per step; tokens/s per device; model TFLOP/s per device
  std::string field;   // the key it was read from ("measured.tokens_per_s_per_gpu")
  base::SourceLoc at;
};

struct Run {
  std::string id;
  base::SourceLoc at;
  std::string source;     // who published it: the repository ("pytorch/torchtitan") or paper
  std::string hardware;   // the hardware profile; "" when no profile matches
  std::string precision;  // "bf16", "fp16", "fp8", "mxfp8"
  Measurement measured;
  std::string scenario_text;  // the scenario the run became (YAML form only)
  // A run that names a scenario file (CSV form, or a YAML case with `scenario:`): the file and
  // its `--set` overrides (key=value), in the order given.
  std::string scenario_file;
  std::vector<std::string> sets;
  std::vector<std::string> notes;  // what was assumed, approximated or not read
  std::string skip;                // non-empty: why it cannot be simulated
  base::SourceLoc skip_at;
  std::optional<synth::Scenario> scenario;  // when it can be simulated
  // A Kineto trace of the run (one rank), read with the file; null when none is named.
  std::shared_ptr<const measured::KinetoTrace> trace;

  // The measured step time, given the model FLOPs of a step in Megatron's convention
  // (needed when the run published model TFLOP/s).
  [[nodiscard]] double measured_step_s(double model_flops) const;
};

struct RunsFile {
  std::string path;
  std::vector<Run> runs;
};

// Runs on hardware `name` simulate on `profile` instead (a calibrated one, say); returns how
// many runs it applies to.
int use_profile(RunsFile& file, const std::string& name, const hw::Profile& profile);

// Reads `path` (.csv: the CSV form, otherwise YAML), with the settings of the recipes file
// `recipes` (experiments/runs/recipes.h; "" for none) where its runs do not state them. Throws
// base::InputError at file:line:col for a malformed file, a run without a measurement, a
// duplicate id or an empty file.
RunsFile read_runs(const std::string& path, const std::string& recipes = "");

}  // namespace tessera::experiments::runs
