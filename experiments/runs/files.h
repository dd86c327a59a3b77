// SPDX-License-Identifier: Apache-2.0
// What `tessera runs --out DIR` writes: runs.csv (every run: its groups, the measurement, the
// prediction and error, or why it was not simulated, and what was assumed) and
// scenarios/<id>.yaml, the scenario each run of a YAML runs file became.
#pragma once

#include <string>
#include <vector>

#include "experiments/runs/evaluate.h"

namespace tessera::experiments::runs {

void write_runs_csv(const std::string& path, const std::vector<RunResult>& results);
void write_scenarios(const std::string& dir, const RunsFile& file);

// Why a run has no error: not simulated (its reason), or a simulation that failed.
std::string status_of(const RunResult& r);

}  // namespace tessera::experiments::runs
