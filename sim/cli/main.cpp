// SPDX-License-Identifier: Apache-2.0
// The tessera command line. The only place that chooses exit codes: 0 success, 2 bad input,
// 3 a simulation that cannot finish, 1 an internal error.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "hwprofiles/hw_profile.h"
#include "sim/base/error.h"
#include "sim/report/report.h"
#include "sim/simulation.h"
#include "synth/scenario/model_presets.h"
#include "synth/synthesize.h"
#include "topology/cluster.h"

namespace tessera::cli {

namespace {

struct RunArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out;
  bool no_share = false;
  bool perf = false;
  bool quiet = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string parallelism_label(const synth::Scenario& s) {
  const auto& p = s.parallel;
  return fmt::format("TP{} PP{} DP{}{}", p.tp, p.pp, p.dp, p.sp ? " SP" : "");
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

void write_outputs(const RunArgs& a, const sim::report::RunLabel& label, const graph::ExecGraph& g,
                   const sim::RunStats& r, const sim::report::Metrics& m) {
  std::filesystem::create_directories(a.out);
  std::ofstream js(a.out + "/summary.json");
  if (!js) {
    throw base::InputError(base::SourceLoc{a.out, 0, 0}, "cannot write into this folder");
  }
  js << sim::report::summary_json(label, g, r, m).dump(2) << "\n";
  sim::report::write_ranks_csv(a.out + "/ranks.csv", r);
  sim::report::write_timeline(a.out + "/timeline.json", g, r);
}

int run(const RunArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  double t_load = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  graph::ExecGraph g = synth::synthesize(s, {.share_rank_classes = !a.no_share});
  double t_synth = seconds_since(t1);
  auto t2 = std::chrono::steady_clock::now();
  sim::SimOptions opt;
  opt.record_timeline = !a.out.empty();
  opt.share_rank_classes = !a.no_share;
  opt.dtype = s.training.precision;
  sim::RunStats r = sim::simulate(g, cluster, profile, opt);
  double t_sim = seconds_since(t2);
  auto label = make_label(s, profile);
  auto m = sim::report::compute_metrics(g, r, s.cluster.devices);
  if (!a.quiet) {
    sim::report::print_summary(std::cout, label, g, r, m);
  }
  if (!a.out.empty()) {
    write_outputs(a, label, g, r, m);
    if (!a.quiet) {
      fmt::print("  wrote {}/summary.json, ranks.csv, timeline.json\n", a.out);
    }
  }
  if (a.perf) {
    std::size_t nodes = 0;
    for (const auto& c : g.classes) {
      nodes += c.size();
    }
    fmt::print(
        "perf: load {:.3f} s; synthesized {} nodes ({} rank graphs) in {:.3f} s ({:.3g} nodes/s); "
        "simulated {} events in {:.3f} s ({:.3g} events/s)\n",
        t_load, nodes, g.classes.size(), t_synth, static_cast<double>(nodes) / t_synth, r.events,
        t_sim, static_cast<double>(r.events) / t_sim);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    fmt::print("perf: total {:.3f} s, peak RSS {:.0f} MiB\n", seconds_since(t0),
               static_cast<double>(usage.ru_maxrss) / 1024.0);
  }
  return 0;
}

int check(const RunArgs& a) {
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  fmt::print("{}: ok ({} on {} x {}, {}, {})\n", a.scenario,
             s.model.preset.empty() ? "custom model" : s.model.preset, s.cluster.devices,
             profile.name, parallelism_label(s), cluster.describe());
  return 0;
}

int list() {
  fmt::print("hardware profiles:");
  for (const auto& n : hw::profile_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\ntopology presets:");
  for (const auto& n : topology::preset_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nmodel presets:");
  for (auto n : synth::model_preset_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nschedules: gpipe 1f1b\n");
  return 0;
}

int dispatch(int argc, char** argv) {
  CLI::App app{"tessera: predicts the step time, MFU and memory of distributed LLM training"};
  app.require_subcommand(1);
  RunArgs a;
  auto* run_cmd = app.add_subcommand("run", "synthesize and simulate one training step");
  auto* check_cmd = app.add_subcommand("check", "validate a scenario without simulating");
  app.add_subcommand("list", "list hardware profiles, topology presets and model presets");
  for (auto* c : {run_cmd, check_cmd}) {
    c->add_option("scenario", a.scenario, "scenario YAML file")->required();
    c->add_option("--set", a.sets, "override a scenario key: key.path=value (repeatable)");
  }
  run_cmd->add_option("--out", a.out, "write summary.json, ranks.csv and timeline.json here");
  run_cmd->add_flag("--no-share", a.no_share,
                    "simulate every rank on its own instead of one instance per rank class");
  run_cmd->add_flag("--perf", a.perf, "print synthesis and simulation speed");
  run_cmd->add_flag("--quiet", a.quiet, "print nothing but errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (run_cmd->parsed()) {
    return run(a);
  }
  if (check_cmd->parsed()) {
    return check(a);
  }
  return list();
}

}  // namespace
}  // namespace tessera::cli

int main(int argc, char** argv) {
  using namespace tessera;
  try {
    return cli::dispatch(argc, argv);
  } catch (const base::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const base::SimulationError& e) {
    std::cerr << "simulation failed: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}
