// SPDX-License-Identifier: Apache-2.0
// Mpipe's cost model of a transposed encoder, per pipeline rank (docs/mpipe_transpose.md, "Cost
// model"), evaluated on a synthesized step: E(j), the encoder forward of microbatch j on the
// rank whose plan runs it; F, one LLM stage's forward of one microbatch; and per rank the
// warmup slack w_r, the encoder work E_r it runs before its first LLM task and the predicted
// exposed spill max(0, E_r - w_r). synth does not time kernels: the caller supplies each
// compute node's duration (experiments/ passes the simulator's roofline model).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/exec_graph.h"
#include "synth/schedule/transpose.h"

namespace tessera::synth::schedule {

// A compute node's duration in seconds, from the caller's timing model.
using NodeSeconds = std::function<double(const graph::Node&)>;

struct SpillModelRank {
  int stage = 0;
  std::vector<int> owned;   // microbatches whose encoder forward runs in the rank's prefix
  double slack_s = 0.0;     // w_r
  double assigned_s = 0.0;  // E_r
  double spill_s = 0.0;     // max(0, E_r - w_r)
};

struct SpillModel {
  double encoder_forward_s = 0.0;     // mean E(j) over microbatches with images
  double stage_forward_s = 0.0;       // F (mean over stages of the LLM forward of microbatch 0)
  std::vector<SpillModelRank> ranks;  // empty without a plan or without images
};

// Whether graph name `name` is an encoder node's ("encoder." prefix).
bool is_encoder_name(const graph::ExecGraph& g, std::uint32_t name);

// `plan` is the step's transpose plan (one order per pipeline rank; rank r's graph is
// g.classes[r]); `microbatches` per replica. B is taken as 2F and message latency as 0.
SpillModel spill_model(const std::vector<std::vector<Step>>& plan, const graph::ExecGraph& g,
                       std::int64_t microbatches, const NodeSeconds& seconds);

}  // namespace tessera::synth::schedule
