// SPDX-License-Identifier: Apache-2.0
// Mpipe's cost model against the simulation, per pipeline rank of a transposed encoder: the
// model's predictions (synth::schedule::spill_model, timed by the simulator's roofline
// model) next to what the event simulation shows: when the rank's first LLM input was
// ready, how much encoder work it had done by then and how long its first LLM forward then
// waited.
#pragma once

#include <vector>

#include "experiments/pipeline.h"
#include "synth/scenario/scenario.h"

namespace tessera::experiments {

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
  std::vector<SpillRow> rows;      // empty unless the encoder is transposed and has images
};

// Needs the outcome's timeline spans (simulate with timeline recording on).
SpillAnalysis analyze_spill(const synth::Scenario& s, const Outcome& o);

}  // namespace tessera::experiments
