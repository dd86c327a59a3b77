// SPDX-License-Identifier: Apache-2.0
// Mpipe's cost model against the simulation, per pipeline rank of a transposed encoder
// (mpipe_transpose.md, "Cost model"): the warmup slack w_r, the encoder work E_r a rank runs
// before its first LLM task and the predicted exposed spill max(0, E_r - w_r), next to what
// the event simulation shows: when the rank's first LLM input was ready, how much encoder
// work it had done by then and how long its first LLM forward then waited.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "experiments/pipeline.h"
#include "hwprofiles/hw_profile.h"
#include "synth/scenario/scenario.h"

namespace tessera::cli {

struct SpillRow {
  int stage = 0;
  std::vector<int> owned;          // microbatches whose encoder forward runs in the prefix
  double slack_s = 0.0;            // predicted w_r
  double assigned_s = 0.0;         // predicted E_r
  double spill_s = 0.0;            // predicted max(0, E_r - w_r)
  double ready_s = 0.0;            // simulated: the first LLM forward's input ready
  double encoder_before_s = 0.0;   // simulated: encoder compute done before the first forward
  double simulated_spill_s = 0.0;  // simulated: first forward start - input ready
};

struct SpillAnalysis {
  double encoder_forward_s = 0.0;  // mean E(j) over microbatches with images (cost model)
  double stage_forward_s = 0.0;    // F: one LLM stage's forward of one microbatch (cost model)
  std::vector<SpillRow> rows;
};

// Needs the outcome's timeline spans (simulate with timeline recording on).
SpillAnalysis analyze_spill(const synth::Scenario& s, const experiments::Outcome& o);
void print_spill(std::ostream& out, const SpillAnalysis& a);
nlohmann::json spill_json(const SpillAnalysis& a);

}  // namespace tessera::cli
