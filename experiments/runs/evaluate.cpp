// SPDX-License-Identifier: Apache-2.0
#include "experiments/runs/evaluate.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/pipeline.h"

namespace tessera::experiments::runs {

namespace {

RunResult simulate_run(const Run& run) {
  RunResult r;
  r.run = &run;
  if (!run.scenario) {
    return r;
  }
  try {
    RunOptions opt;
    opt.balanced_twin = false;
    Outcome o = simulate_scenario(*run.scenario, opt);
    r.simulated = true;
    r.predicted_s = o.stats.step_time_s;
    r.measured_s = run.measured_step_s(o.graph.info.model_flops);
    r.mfu = o.metrics.mfu;
    for (const auto& rank : o.stats.ranks) {
      r.peak_hbm_bytes = std::max(r.peak_hbm_bytes, rank.peak_memory);
    }
    r.hbm_capacity_bytes = synth::hardware_profile(*run.scenario).hbm_capacity;
  } catch (const base::Error& e) {
    r.failure = e.what();
  }
  return r;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

GroupStats stats_of(const std::string& name, const std::vector<const RunResult*>& rs) {
  GroupStats g;
  g.name = name;
  g.count = static_cast<int>(rs.size());
  std::vector<double> abs;
  double sum = 0.0;
  for (const RunResult* r : rs) {
    const double e = r->error();
    abs.push_back(std::abs(e));
    sum += e;
    g.max_abs = std::max(g.max_abs, std::abs(e));
    g.optimistic += e < 0.0 ? 1 : 0;
  }
  g.median_abs = median(abs);
  g.mean_signed = sum / static_cast<double>(rs.size());
  return g;
}

}  // namespace

std::vector<RunResult> evaluate(const RunsFile& file, int jobs) {
  std::vector<RunResult> out(file.runs.size());
  const int threads = jobs > 0 ? jobs : tbb::info::default_concurrency();
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(threads));
  tbb::parallel_for(std::size_t{0}, file.runs.size(),
                    [&](std::size_t i) { out[i] = simulate_run(file.runs[i]); });
  return out;
}

std::vector<GroupStats> group_stats(const std::vector<RunResult>& results,
                                    const std::function<std::string(const Run&)>& key) {
  std::map<std::string, std::vector<const RunResult*>> groups;
  std::vector<const RunResult*> all;
  for (const RunResult& r : results) {
    if (r.simulated && r.measured_s > 0.0) {
      groups[key(*r.run)].push_back(&r);
      all.push_back(&r);
    }
  }
  std::vector<GroupStats> out;
  for (const auto& [name, rs] : groups) {
    out.push_back(stats_of(name, rs));
  }
  if (!all.empty()) {
    out.push_back(stats_of("all", all));
  }
  return out;
}

}  // namespace tessera::experiments::runs
