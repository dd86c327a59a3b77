// SPDX-License-Identifier: Apache-2.0
// `compare --sweep key.path=v1,v2,...`: the schedule comparison once per value of one
// scenario key. A value that is not valid input (a misspelt name, a wrong type) is bad
// input; a value that makes the scenario invalid (pp no longer dividing the layers) is a
// point that cannot run; a schedule that cannot run at a value is a row that says why.
#pragma once

#include <string>
#include <vector>

#include "experiments/compare.h"

namespace tessera::experiments {

struct Sweep {
  std::string key;
  std::vector<std::string> values;
};

// "key.path=v1,v2,..."; base::InputError naming --sweep when malformed.
Sweep parse_sweep(const std::string& arg);

struct SweepPoint {
  std::string value;
  std::string file_part;  // in per-run report names
  std::string skipped;    // why the scenario is invalid at this value; rows are then empty
  std::string context;    // devices, parallelism and microbatches
  std::vector<Row> rows;  // one per schedule
};

struct SweepResult {
  std::string name;  // the scenario's
  Sweep sweep;
  std::vector<std::string> labels;  // the schedules', in --schedules order
  std::vector<SweepPoint> points;   // one per value
};

struct SweepRequest {
  std::string scenario;           // the YAML file
  std::vector<std::string> sets;  // --set overrides, applied before the swept key
  std::string sweep;              // the --sweep argument
  std::string schedules;          // the --schedules argument
};

// Loads the scenario at every value first (bad input fails before anything runs), then
// compares the schedules at each valid one. `sink` sees every finished run with its value's
// file part; runs record no timeline.
using SweepSink =
    std::function<void(const SweepPoint& p, const std::string& spec, const Outcome& o)>;
SweepResult run_sweep(const SweepRequest& req, const SweepSink& sink);

// Whether schedule `i` has a speedup at this value: it and the baseline both run.
bool has_speedup(const SweepPoint& p, std::size_t i);

// "TP2 PP2 DP1 ..." with devices and microbatches, as the tables print it.
std::string context_of(const synth::Scenario& s);

}  // namespace tessera::experiments
