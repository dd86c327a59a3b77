// SPDX-License-Identifier: Apache-2.0
#include "experiments/compare.h"

#include <map>

#include "base/error.h"
#include "experiments/schedule_spec.h"

namespace tessera::experiments {

namespace {

// The step time of the scenario's LLM alone under a body schedule, memoized by the body's
// label: the reference the "exposed encoder" column subtracts. One per scenario.
class LlmOnly {
 public:
  double step_s(const synth::Scenario& s) {
    synth::Scenario llm = s;
    llm.cluster.devices -= s.encoder_devices();
    llm.encoder = synth::EncoderConfig{};
    llm.schedule.encoder = synth::EncoderPlacement::kInline;
    std::string key = synth::schedule_label(llm.schedule);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it = cache_.emplace(key, simulate_scenario(llm, true, false).stats.step_time_s).first;
    }
    return it->second;
  }

 private:
  std::map<std::string, double> cache_;
};

// One schedule's row: the workload under `cfg` (with the encoder's own devices on top),
// simulated unless it cannot run.
Row run_schedule(const synth::Scenario& base, const std::string& spec,
                 const synth::ScheduleConfig& cfg, LlmOnly& llm_only, bool timeline,
                 const RunSink& sink) {
  synth::Scenario s = base;
  s.schedule = cfg;
  s.cluster.devices += s.encoder_devices();
  Row row{.schedule = synth::schedule_label(cfg), .skipped = unsupported(s, cfg)};
  row.config = scenario_config(s);
  if (!row.skipped.empty()) {
    return row;
  }
  try {
    Outcome o = simulate_scenario(s, true, timeline);
    measure(o, row);
    if (s.encoder.present) {
      row.exposed_encoder_s = o.stats.step_time_s - llm_only.step_s(s);
    }
    if (sink) {
      sink(spec, o);
    }
  } catch (const base::InputError& e) {  // e.g. a topology that cannot hold the devices
    row.skipped = e.message();
  }
  return row;
}

void fill_speedups(std::vector<Row>& rows) {
  for (Row& r : rows) {
    r.speedup = r.skipped.empty() && rows[0].skipped.empty() ? rows[0].step_s / r.step_s : 0.0;
  }
}

}  // namespace

void measure(const Outcome& o, Row& row) {
  double t = o.stats.step_time_s;
  row.step_s = t;
  row.mfu = o.metrics.mfu;
  row.tokens_per_s = o.metrics.tokens_per_s;
  row.bubble = o.metrics.idle_s / t;
  for (double e : o.metrics.exposed_comm_s) {
    row.exposed_comm += e / t;
  }
  row.peak_hbm = o.metrics.peak_hbm;
  row.oom = o.metrics.oom;
}

std::vector<Row> compare_schedules(const synth::Scenario& base,
                                   const std::vector<std::string>& specs, bool timeline,
                                   const RunSink& sink) {
  if (specs.empty()) {
    throw base::InputError("--schedules: give at least one schedule");
  }
  std::vector<synth::ScheduleConfig> configs;
  for (const std::string& spec : specs) {  // a bad spec fails before anything runs
    configs.push_back(parse_schedule(spec));
  }
  LlmOnly llm_only;
  std::vector<Row> rows;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    rows.push_back(run_schedule(base, specs[i], configs[i], llm_only, timeline, sink));
  }
  fill_speedups(rows);
  return rows;
}

}  // namespace tessera::experiments
