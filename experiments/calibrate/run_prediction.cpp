// SPDX-License-Identifier: Apache-2.0
#include "experiments/calibrate/run_prediction.h"

#include <algorithm>

#include "experiments/pipeline.h"
#include "measured/trace_comparison.h"

namespace tessera::experiments::calibrate {

namespace {

Outcome simulate(const runs::Run& run, const hw::Profile& profile) {
  synth::Scenario s = *run.scenario;
  s.cluster.profile = profile;
  RunOptions opt;
  opt.balanced_twin = false;
  return simulate_scenario(s, opt);
}

bool compared(const measured::ComparedRow& r) {
  return r.section == "compute" && r.match == "one-to-one" && r.measured.time_s > 0.0 &&
         r.simulated.time_s > 0.0;
}

}  // namespace

RunPrediction predict_run(const runs::Run& run, const hw::Profile& profile,
                          const std::vector<std::string>& categories) {
  const Outcome o = simulate(run, profile);
  RunPrediction p{o.stats.step_time_s, {}, o.graph.info.model_flops};
  if (categories.empty()) {
    return p;
  }
  const measured::TraceComparison c = measured::compare_trace(*run.trace, o.graph, o.stats);
  for (const std::string& name : categories) {
    const auto row =
        std::find_if(c.rows.begin(), c.rows.end(),
                     [&](const measured::ComparedRow& r) { return r.category == name; });
    // A category the changed profile no longer has: no time (the fit sees a large error).
    p.categories.push_back(row == c.rows.end() ? 0.0 : row->simulated.time_s);
  }
  return p;
}

FirstPrediction first_prediction(const runs::Run& run, const hw::Profile& profile) {
  const Outcome o = simulate(run, profile);
  FirstPrediction out{{o.stats.step_time_s, {}, o.graph.info.model_flops}, {}};
  if (!run.trace) {
    return out;
  }
  for (const measured::ComparedRow& r :
       measured::compare_trace(*run.trace, o.graph, o.stats).rows) {
    if (compared(r)) {
      out.traced.push_back({r.category, r.measured.time_s, r.simulated.time_s});
    }
  }
  return out;
}

}  // namespace tessera::experiments::calibrate
