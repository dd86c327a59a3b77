// SPDX-License-Identifier: Apache-2.0
#include "experiments/pipeline.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "base/error.h"
#include "synth/build/synthesize.h"
#include "topology/cluster.h"

namespace tessera::experiments {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

sim::report::RunLabel make_label(const synth::Scenario& s, const hw::Profile& profile) {
  sim::report::RunLabel l;
  l.scenario = s.name;
  l.model = s.model.preset.empty() ? fmt::format("{}-layer model", s.model.layers) : s.model.preset;
  l.hardware = profile.name;
  l.topology =
      s.cluster.topology.source.empty() ? s.cluster.topology.kind : s.cluster.topology.source;
  l.parallelism = parallelism_label(s);
  l.schedule = synth::schedule_label(s.schedule);
  l.devices = s.cluster.devices;
  l.microbatches = s.microbatches();
  return l;
}

}  // namespace

std::vector<sim::report::ConfigField> scenario_config(const synth::Scenario& s) {
  return sim::report::config_fields(make_label(s, synth::hardware_profile(s)),
                                    synth::step_config(s));
}

std::string parallelism_label(const synth::Scenario& s) {
  const auto& p = s.parallel;
  const std::string cp = p.cp > 1 ? fmt::format(" CP{}", p.cp) : "";
  return fmt::format("TP{}{} PP{} DP{}{}", p.tp, cp, p.pp, p.dp, p.sp ? " SP" : "");
}

Outcome simulate_scenario(const synth::Scenario& s, const RunOptions& run) {
  Outcome o;
  auto t0 = std::chrono::steady_clock::now();
  hw::Profile profile = synth::hardware_profile(s);
  std::optional<topology::Cluster> own;
  if (run.cluster == nullptr) {
    own.emplace(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  }
  const topology::Cluster& cluster = run.cluster != nullptr ? *run.cluster : *own;
  o.load_s = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  o.graph = synth::synthesize(s, {.share_rank_classes = run.share});
  o.synth_s = seconds_since(t1);
  auto t2 = std::chrono::steady_clock::now();
  sim::SimOptions opt;
  opt.record_timeline = run.timeline;
  opt.timeline_ranks = run.timeline_ranks;
  opt.share_rank_classes = run.share;
  opt.dtype = s.training.precision;
  opt.effects = run.effects;
  opt.stop_above_memory = run.stop_above_memory;
  o.stats = sim::simulate(o.graph, cluster, profile, opt);
  o.sim_s = seconds_since(t2);
  o.label = make_label(s, profile);
  o.label.effects_off = run.effects.disabled();
  o.metrics = sim::report::compute_metrics(o.graph, o.stats, s.cluster.devices);
  if (run.balanced_twin && !o.graph.expert_loads.empty()) {  // what the imbalance costs
    synth::Scenario balanced = s;
    balanced.model.moe.routing.kind = synth::RoutingKind::kBalanced;
    const graph::ExecGraph twin = synth::synthesize(balanced, {.share_rank_classes = run.share});
    sim::SimOptions twin_opt = opt;
    twin_opt.record_timeline = false;
    o.metrics.balanced_step_s = sim::simulate(twin, cluster, profile, twin_opt).step_time_s;
  }
  return o;
}

Outcome simulate_scenario(const synth::Scenario& s, bool share, bool timeline,
                          const std::vector<std::int32_t>& timeline_ranks,
                          const models::Effects& effects) {
  RunOptions run;
  run.share = share;
  run.timeline = timeline;
  run.timeline_ranks = timeline_ranks;
  run.effects = effects;
  return simulate_scenario(s, run);
}

Outcome simulate_graph(graph::ExecGraph g, const hw::Profile& profile,
                       const topology::TopologySpec& topology, const sim::SimOptions& opt,
                       sim::report::RunLabel label) {
  Outcome o;
  topology::Cluster cluster(topology, profile, g.num_ranks);
  auto t0 = std::chrono::steady_clock::now();
  o.stats = sim::simulate(g, cluster, profile, opt);
  o.sim_s = seconds_since(t0);
  o.metrics = sim::report::compute_metrics(g, o.stats, g.num_ranks);
  o.graph = std::move(g);
  o.label = std::move(label);
  return o;
}

void write_run_summary(const std::string& dir, const Outcome& o, const std::string& suffix) {
  std::filesystem::create_directories(dir);
  std::ofstream js(dir + "/summary" + suffix + ".json");
  if (!js) {
    throw base::InputError(base::SourceLoc{dir, 0, 0}, "cannot write into this folder");
  }
  js << sim::report::summary_json(o.label, o.graph, o.stats, o.metrics).dump(2) << "\n";
  sim::report::write_ranks_csv(dir + "/ranks" + suffix + ".csv", o.stats);
}

void write_reports(const std::string& dir, const Outcome& o, const std::string& suffix) {
  write_run_summary(dir, o, suffix);
  sim::report::write_timeline(dir + "/timeline" + suffix + ".json.gz", o.graph, o.stats);
}

}  // namespace tessera::experiments
