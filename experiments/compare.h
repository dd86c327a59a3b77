// SPDX-License-Identifier: Apache-2.0
// One workload under several pipeline schedules, side by side: a row of step time, MFU,
// bubble, exposed communication (and for multimodal scenarios the exposed encoder), peak
// memory and the speedup against the first schedule; a schedule that cannot run the workload
// is a row with the reason.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "experiments/pipeline.h"
#include "synth/scenario/scenario.h"

namespace tessera::experiments {

struct Row {
  std::string schedule;
  std::string skipped;  // reason, when the schedule cannot run this workload
  double step_s = 0.0;
  double mfu = 0.0;
  double tokens_per_s = 0.0;
  double bubble = 0.0;        // mean idle / step time
  double exposed_comm = 0.0;  // mean exposed communication / step time
  double peak_hbm = 0.0;
  bool oom = false;
  double speedup = 0.0;  // the first row's step time / this one's; 0 where either cannot run
  // Multimodal scenarios: step time minus the same LLM's without an encoder, under the same
  // body schedule on the same devices (< 0: never; the column is absent without an encoder).
  double exposed_encoder_s = -1.0;
  // The run's configuration (scenario_config), also where it cannot run.
  std::vector<sim::report::ConfigField> config{};
};

// Sees every run that finished: its spec (as given in --schedules) and outcome.
using RunSink = std::function<void(const std::string& spec, const Outcome& o)>;

// A finished run's figures in `row` (step time, MFU, tokens/s, bubble, exposed communication,
// peak HBM, out of memory).
void measure(const Outcome& o, Row& row);

// One row per spec, in order, with speedups against the first. `timeline` records the
// outcomes' spans (for reports with timelines).
std::vector<Row> compare_schedules(const synth::Scenario& base,
                                   const std::vector<std::string>& specs, bool timeline,
                                   const RunSink& sink);

}  // namespace tessera::experiments
