// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/spill_model.h"

#include <string_view>

namespace tessera::synth::schedule {

namespace {

// How many times rank r's plan runs microbatch j's encoder forward (a recompute runs it
// again).
std::vector<int> encoder_runs(const std::vector<Step>& order, std::size_t microbatches) {
  std::vector<int> runs(microbatches, 0);
  for (const Step& st : order) {
    if (st.kind == Step::kEncoderForward || st.kind == Step::kEncoderRecompute) {
      ++runs[static_cast<std::size_t>(st.microbatch)];
    }
  }
  return runs;
}

// E(j) per microbatch (0 without images), and F: the forward compute of microbatches on the
// ranks whose plans run them, by the caller's per-node durations.
void model_costs(const std::vector<std::vector<Step>>& plan, const graph::ExecGraph& g,
                 const NodeSeconds& seconds, std::vector<double>& e, double& f) {
  double llm = 0.0;
  for (std::size_t r = 0; r < plan.size() && r < g.classes.size(); ++r) {
    std::vector<int> runs = encoder_runs(plan[r], e.size());
    std::vector<double> mine(e.size(), 0.0);
    for (const graph::Node& n : g.classes[r].nodes) {
      if (n.kind != graph::NodeKind::kCompute || n.phase != graph::Phase::kForward ||
          n.microbatch < 0) {
        continue;
      }
      double d = seconds(n);
      if (is_encoder_name(g, n.name)) {
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

// The microbatches whose encoder forward rank r runs before its first body task.
std::vector<int> prefix_owned(const std::vector<Step>& order) {
  std::vector<int> owned;
  for (const Step& st : order) {
    if (st.kind == Step::kBody) {
      break;
    }
    if (st.kind == Step::kEncoderForward) {
      owned.push_back(st.microbatch);
    }
  }
  return owned;
}

}  // namespace

bool is_encoder_name(const graph::ExecGraph& g, std::uint32_t name) {
  return std::string_view(g.names[name]).starts_with("encoder.");
}

SpillModel spill_model(const std::vector<std::vector<Step>>& plan, const graph::ExecGraph& g,
                       std::int64_t microbatches, const NodeSeconds& seconds) {
  SpillModel m;
  if (plan.empty()) {
    return m;
  }
  std::vector<double> e(static_cast<std::size_t>(microbatches), 0.0);
  model_costs(plan, g, seconds, e, m.stage_forward_s);
  int with_images = 0;
  for (double x : e) {
    m.encoder_forward_s += x;
    with_images += x > 0.0 ? 1 : 0;
  }
  if (with_images == 0) {
    return m;  // no images in the step: no encoder work to place
  }
  m.encoder_forward_s /= with_images;
  TransposeCosts costs;
  costs.encoder_forward = e;
  costs.stage_forward = m.stage_forward_s;
  costs.stage_backward = 2.0 * m.stage_forward_s;
  SpillPrediction pred = predict_spill(plan, costs);
  for (std::size_t r = 0; r < plan.size(); ++r) {
    m.ranks.push_back({.stage = static_cast<int>(r),
                       .owned = prefix_owned(plan[r]),
                       .slack_s = pred.slack[r],
                       .assigned_s = pred.assigned[r],
                       .spill_s = pred.spill[r]});
  }
  return m;
}

}  // namespace tessera::synth::schedule
