// SPDX-License-Identifier: Apache-2.0
// What `tessera calibrate` compares for one run: its step time and, when the run names a
// PyTorch profiler (Kineto) trace, its kernel time per category on the traced rank
// (measured::compare_trace's one-to-one compute rows: GEMM, attention, norm, optimizer), each
// a residual of the fit. Internal to experiments/calibrate/.
#pragma once

#include <string>
#include <vector>

#include "experiments/runs/runs_file.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::experiments::calibrate {

struct RunPrediction {
  double step_s = 0.0;
  std::vector<double> categories;  // seconds per step, in the order asked for
  double model_flops = 0.0;
};

// A category of a traced run with its measured and simulated kernel time per step.
struct TracedCategory {
  std::string name;
  double measured_s = 0.0;
  double simulated_s = 0.0;
};

// Simulates `run` on `profile`; `categories` (names) are read off the comparison with the
// run's trace. Throws base::Error when the run cannot be simulated.
RunPrediction predict_run(const runs::Run& run, const hw::Profile& profile,
                          const std::vector<std::string>& categories);

// A run's first simulation: its prediction, and the categories of its trace that the
// simulation has one-to-one, both sides timed (what the fit compares; empty without a trace).
struct FirstPrediction {
  RunPrediction prediction;
  std::vector<TracedCategory> traced;
};
FirstPrediction first_prediction(const runs::Run& run, const hw::Profile& profile);

}  // namespace tessera::experiments::calibrate
