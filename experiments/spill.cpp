// SPDX-License-Identifier: Apache-2.0
#include "experiments/spill.h"

#include <algorithm>

#include "base/units.h"
#include "sim/models/compute/roofline_compute_model.h"
#include "synth/build/synthesize.h"
#include "synth/parallel/mesh.h"
#include "synth/schedule/spill_model.h"

namespace tessera::experiments {

namespace {

double secs(base::SimTime t) {
  return static_cast<double>(t) * 1e-12;
}

bool is_encoder(const graph::ExecGraph& g, std::uint32_t name) {
  return synth::schedule::is_encoder_name(g, name);
}

// The start of rank `rank`'s first LLM compute, -1 when it has none.
base::SimTime first_llm_compute(const Outcome& o, std::int32_t rank) {
  base::SimTime first = -1;
  for (const sim::Span& sp : o.stats.spans) {
    if (sp.rank == rank && sp.stream == graph::Stream::kCompute && !is_encoder(o.graph, sp.name) &&
        sp.end > sp.start && (first < 0 || sp.start < first)) {
      first = sp.start;
    }
  }
  return first;
}

// When the first LLM compute's input was ready: the activation from the stage before, or on
// stage 0 its own encoder forward of microbatch 0 (the spans of that microbatch that end
// before the first LLM compute).
base::SimTime input_ready(const Outcome& o, std::int32_t rank, std::size_t stage,
                          base::SimTime first) {
  base::SimTime ready = 0;
  for (const sim::Span& sp : o.stats.spans) {
    if (sp.rank != rank || sp.microbatch != 0) {
      continue;
    }
    if (stage > 0 && sp.stream == graph::Stream::kPPRecvFwd &&
        o.graph.names[sp.name] == "pp.recv_activation") {
      ready = ready == 0 ? sp.end : std::min(ready, sp.end);
    }
    if (stage == 0 && sp.stream == graph::Stream::kCompute && is_encoder(o.graph, sp.name) &&
        o.graph.names[sp.name] != "encoder.merge_features" && sp.end <= first) {
      ready = std::max(ready, sp.end);
    }
  }
  return ready;
}

// The encoder compute rank `rank` ran before its first LLM compute.
double encoder_before(const Outcome& o, std::int32_t rank, base::SimTime first) {
  double s = 0.0;
  for (const sim::Span& sp : o.stats.spans) {
    if (sp.rank == rank && sp.stream == graph::Stream::kCompute && is_encoder(o.graph, sp.name) &&
        sp.end <= first) {
      s += secs(sp.end - sp.start);
    }
  }
  return s;
}

}  // namespace

SpillAnalysis analyze_spill(const synth::Scenario& s, const Outcome& o) {
  SpillAnalysis a;
  auto plan = synth::transpose_plan(s);
  if (plan.empty()) {
    return a;
  }
  hw::Profile profile = synth::hardware_profile(s);
  models::RooflineComputeModel roofline(profile);
  synth::schedule::SpillModel model = synth::schedule::spill_model(
      plan, o.graph, s.microbatches(),
      [&](const graph::Node& n) { return secs(roofline.duration(n)); });
  a.encoder_forward_s = model.encoder_forward_s;
  a.stage_forward_s = model.stage_forward_s;
  synth::parallel::Mesh mesh(s.parallel);  // each stage's representative rank: tp = dp = 0
  for (const synth::schedule::SpillModelRank& m : model.ranks) {
    synth::parallel::Coord co;
    co.at[static_cast<std::size_t>(synth::Axis::kPP)] = m.stage;
    auto rank = static_cast<std::int32_t>(mesh.rank(co));
    base::SimTime first = first_llm_compute(o, rank);
    base::SimTime ready = input_ready(o, rank, static_cast<std::size_t>(m.stage), first);
    a.rows.push_back({.stage = m.stage,
                      .owned = m.owned,
                      .slack_s = m.slack_s,
                      .assigned_s = m.assigned_s,
                      .spill_s = m.spill_s,
                      .ready_s = secs(ready),
                      .encoder_before_s = encoder_before(o, rank, first),
                      .simulated_spill_s = first > ready ? secs(first - ready) : 0.0});
  }
  return a;
}

}  // namespace tessera::experiments
