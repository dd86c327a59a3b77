// SPDX-License-Identifier: Apache-2.0
#include "cli/spill.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "base/units.h"
#include "sim/models/compute/roofline_compute_model.h"
#include "synth/build/synthesize.h"
#include "synth/parallel/mesh.h"

namespace tessera::cli {

namespace {

using synth::schedule::Step;

bool is_encoder(const graph::ExecGraph& g, std::uint32_t name) {
  return std::string_view(g.names[name]).starts_with("encoder.");
}

double secs(base::SimTime t) {
  return static_cast<double>(t) * 1e-12;
}

// The cost model's times: roofline durations of compute nodes. E(j) is the encoder forward of
// microbatch j on the rank whose plan runs it (a recompute there runs the same forward again:
// the sum is divided by the runs); F is the mean over stages of the LLM forward of
// microbatch 0.
void model_costs(const synth::Scenario& s, const experiments::Outcome& o,
                 const std::vector<std::vector<Step>>& plan, std::vector<double>& e, double& f) {
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  models::RooflineComputeModel model(profile);
  e.assign(static_cast<std::size_t>(s.microbatches()), 0.0);
  double llm = 0.0;
  for (std::size_t r = 0; r < plan.size() && r < o.graph.classes.size(); ++r) {
    std::vector<int> runs(e.size(), 0);
    for (const Step& st : plan[r]) {
      if (st.kind == Step::kEncoderForward || st.kind == Step::kEncoderRecompute) {
        ++runs[static_cast<std::size_t>(st.microbatch)];
      }
    }
    std::vector<double> mine(e.size(), 0.0);
    for (const graph::Node& n : o.graph.classes[r].nodes) {
      if (n.kind != graph::NodeKind::kCompute || n.phase != graph::Phase::kForward ||
          n.microbatch < 0) {
        continue;
      }
      double d = secs(model.duration(n));
      if (is_encoder(o.graph, n.name)) {
        mine[static_cast<std::size_t>(n.microbatch)] += d;
      } else if (n.microbatch == 0) {
        llm += d;
      }
    }
    for (const Step& st : plan[r]) {
      if (st.kind == Step::kEncoderForward) {
        auto j = static_cast<std::size_t>(st.microbatch);
        e[j] = mine[j] / runs[j];
      }
    }
  }
  f = llm / static_cast<double>(plan.size());
}

}  // namespace

SpillAnalysis analyze_spill(const synth::Scenario& s, const experiments::Outcome& o) {
  SpillAnalysis a;
  auto plan = synth::transpose_plan(s);
  if (plan.empty()) {
    return a;
  }
  std::vector<double> e;
  model_costs(s, o, plan, e, a.stage_forward_s);
  int with_images = 0;
  for (double x : e) {
    a.encoder_forward_s += x;
    with_images += x > 0.0 ? 1 : 0;
  }
  if (with_images == 0) {
    return a;  // no images in the step: no encoder work to place
  }
  a.encoder_forward_s /= with_images;
  synth::schedule::TransposeCosts costs;
  costs.encoder_forward = e;
  costs.stage_forward = a.stage_forward_s;
  costs.stage_backward = 2.0 * a.stage_forward_s;
  auto pred = synth::schedule::predict_spill(plan, costs);

  // The simulation, on each stage's representative rank (tp = dp = 0).
  synth::parallel::Mesh mesh(s.parallel);
  for (std::size_t r = 0; r < plan.size(); ++r) {
    SpillRow row;
    row.stage = static_cast<int>(r);
    for (const Step& st : plan[r]) {
      if (st.kind == Step::kBody) {
        break;
      }
      if (st.kind == Step::kEncoderForward) {
        row.owned.push_back(st.microbatch);
      }
    }
    row.slack_s = pred.slack[r];
    row.assigned_s = pred.assigned[r];
    row.spill_s = pred.spill[r];
    synth::parallel::Coord co;
    co.at[static_cast<std::size_t>(synth::Axis::kPP)] = static_cast<std::int64_t>(r);
    auto rank = static_cast<std::int32_t>(mesh.rank(co));
    base::SimTime first = -1;  // the first LLM compute
    for (const sim::Span& sp : o.stats.spans) {
      if (sp.rank == rank && sp.stream == graph::Stream::kCompute &&
          !is_encoder(o.graph, sp.name) && sp.end > sp.start && (first < 0 || sp.start < first)) {
        first = sp.start;
      }
    }
    // Its input: the activation from the stage before, or on rank 0 its own encoder forward
    // of microbatch 0 (the spans of that microbatch that end before the first LLM compute).
    base::SimTime ready = 0;
    for (const sim::Span& sp : o.stats.spans) {
      if (sp.rank != rank || sp.microbatch != 0) {
        continue;
      }
      if (r > 0 && sp.stream == graph::Stream::kPPRecvFwd &&
          o.graph.names[sp.name] == "pp.recv_activation") {
        ready = ready == 0 ? sp.end : std::min(ready, sp.end);
      }
      if (r == 0 && sp.stream == graph::Stream::kCompute && is_encoder(o.graph, sp.name) &&
          o.graph.names[sp.name] != "encoder.merge_features" && sp.end <= first) {
        ready = std::max(ready, sp.end);
      }
    }
    for (const sim::Span& sp : o.stats.spans) {
      if (sp.rank == rank && sp.stream == graph::Stream::kCompute && is_encoder(o.graph, sp.name) &&
          sp.end <= first) {
        row.encoder_before_s += secs(sp.end - sp.start);
      }
    }
    row.ready_s = secs(ready);
    row.simulated_spill_s = first > ready ? secs(first - ready) : 0.0;
    a.rows.push_back(std::move(row));
  }
  return a;
}

void print_spill(std::ostream& out, const SpillAnalysis& a) {
  if (a.rows.empty()) {
    return;
  }
  out << fmt::format(
      "  transpose, per pipeline rank: cost model (E = {} per microbatch, F = {}) vs simulation\n",
      base::format_seconds(a.encoder_forward_s), base::format_seconds(a.stage_forward_s));
  out << fmt::format("    {:<5} {:<16} {:>11} {:>11} {:>11}   {:>11} {:>11} {:>11}\n", "rank",
                     "owns", "slack w_r", "encoder E_r", "spill", "input ready", "encoder",
                     "spill");
  for (const SpillRow& r : a.rows) {
    std::string owns;
    for (int j : r.owned) {
      owns += (owns.empty() ? "" : ",") + std::to_string(j);
    }
    if (owns.size() > 16) {
      owns = owns.substr(0, 13) + "...";
    }
    out << fmt::format("    {:<5} {:<16} {:>11} {:>11} {:>11}   {:>11} {:>11} {:>11}\n", r.stage,
                       owns, base::format_seconds(r.slack_s), base::format_seconds(r.assigned_s),
                       base::format_seconds(r.spill_s), base::format_seconds(r.ready_s),
                       base::format_seconds(r.encoder_before_s),
                       base::format_seconds(r.simulated_spill_s));
  }
  out << "    (predicted: mpipe_transpose.md's w_r = E_0 + r F with roofline compute times and no\n"
         "     message latency; simulated: the same quantities as the event simulation ran them)\n";
}

nlohmann::json spill_json(const SpillAnalysis& a) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SpillRow& r : a.rows) {
    rows.push_back({{"stage", r.stage},
                    {"owned_microbatches", r.owned},
                    {"predicted_slack_s", r.slack_s},
                    {"predicted_encoder_s", r.assigned_s},
                    {"predicted_spill_s", r.spill_s},
                    {"simulated_input_ready_s", r.ready_s},
                    {"simulated_encoder_before_first_forward_s", r.encoder_before_s},
                    {"simulated_spill_s", r.simulated_spill_s}});
  }
  return {{"encoder_forward_s", a.encoder_forward_s},
          {"stage_forward_s", a.stage_forward_s},
          {"ranks", rows}};
}

}  // namespace tessera::cli
