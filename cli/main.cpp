// SPDX-License-Identifier: Apache-2.0
// The tessera command line. The only place that chooses exit codes: 0 success, 2 bad input,
// 3 a simulation that cannot finish, 1 an internal error.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/spill.h"
#include "experiments/pipeline.h"
#include "experiments/search/mpi_world.h"
#include "experiments/search/space.h"
#include "hwprofiles/hw_profile.h"
#include "hwprofiles/parameters.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/effects.h"
#include "synth/scenario/model_presets.h"
#include "synth/schedule/schedule_spec.h"
#include "topology/cluster.h"

namespace tessera::cli {

namespace {

void print_perf(const experiments::Outcome& o, double total_s) {
  std::size_t nodes = 0;
  for (const auto& c : o.graph.classes) {
    nodes += c.size();
  }
  fmt::print(
      "perf: load {:.3f} s; synthesized {} nodes ({} rank graphs) in {:.3f} s ({:.3g} nodes/s); "
      "simulated {} events in {:.3f} s ({:.3g} events/s)\n",
      o.load_s, nodes, o.graph.classes.size(), o.synth_s, static_cast<double>(nodes) / o.synth_s,
      o.stats.events, o.sim_s, static_cast<double>(o.stats.events) / o.sim_s);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("perf: total {:.3f} s, peak RSS {:.0f} MiB, {} simulated rank instances\n", total_s,
             static_cast<double>(usage.ru_maxrss) / 1024.0, o.stats.simulated_ranks);
}

}  // namespace

int run(const RunArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  check_input_file("scenario", a.scenario);
  if (!a.out.empty()) {
    prepare_output_dir("--out", a.out);
  }
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  bool transposed = s.encoder.present && s.schedule.encoder == synth::EncoderPlacement::kTranspose;
  models::Effects effects;
  for (const std::string& name : a.without) {
    effects.disable(name);
  }
  experiments::Outcome o = experiments::simulate_scenario(
      s, !a.no_share, !a.out.empty() || transposed,
      sim::report::parse_rank_list_or_empty(a.timeline_ranks), effects);
  experiments::SpillAnalysis spill =
      transposed ? experiments::analyze_spill(s, o) : experiments::SpillAnalysis{};
  if (!a.quiet) {
    sim::report::print_summary(std::cout, o.label, o.graph, o.stats, o.metrics);
    print_spill(std::cout, spill);
  }
  if (!a.out.empty()) {
    experiments::write_reports(a.out, o);
    if (transposed) {
      std::ofstream(a.out + "/transpose.json") << spill_json(spill).dump(2) << "\n";
    }
    if (!a.quiet) {
      fmt::print("  wrote {}/summary.json, ranks.csv, timeline.json.gz\n  {}\n", a.out,
                 sim::report::timeline_note(o.graph, o.stats));
    }
  }
  if (a.perf) {
    print_perf(o, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 0;
}

int check(const RunArgs& a) {
  check_input_file("scenario", a.scenario);
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  hw::Profile profile = synth::hardware_profile(s);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  fmt::print("{}: ok ({} on {} x {}, {}, {})\n", a.scenario,
             s.model.preset.empty() ? "custom model" : s.model.preset, s.cluster.devices,
             profile.name, experiments::parallelism_label(s), cluster.describe());
  return 0;
}

namespace {

int dispatch(int argc, char** argv, const experiments::search::MpiWorld& world) {
  CLI::App app{"tessera: predicts the step time, MFU and memory of distributed LLM training"};
  app.require_subcommand(1);
  RunArgs a;
  CompareArgs c;
  auto* run_cmd = app.add_subcommand("run", "synthesize and simulate one training step");
  auto* check_cmd = app.add_subcommand("check", "validate a scenario without simulating");
  auto* cmp_cmd = app.add_subcommand("compare", "run one workload under several schedules");
  auto* synth_cmd = app.add_subcommand("synth", "write every rank's graph as Chakra traces");
  auto* inspect_cmd = app.add_subcommand("inspect", "summarize one Chakra .et file");
  auto* sim_cmd = app.add_subcommand("simulate", "simulate Chakra traces on a Tessera cluster");
  auto* validate_cmd =
      app.add_subcommand("validate", "compare a scenario's simulation with measured Kineto traces");
  auto* replay_cmd =
      app.add_subcommand("replay", "simulate one measured iteration of a Kineto trace");
  SearchArgs se;
  add_search_command(app, se);
  RunsArgs rs;
  add_runs_command(app, rs);
  CalibrateArgs ca;
  add_calibrate_command(app, ca);
  bool list_params = false;
  app.add_subcommand("list", "list hardware profiles, topology presets and model presets")
      ->add_flag("--parameters", list_params,
                 "print the hardware profile keys (meaning, bounds, source) as a table");
  ValidateArgs va;
  validate_cmd->add_option("scenario", va.scenario, "scenario YAML file")->required();
  validate_cmd->add_option("--set", va.sets, "override a scenario key (repeatable)");
  validate_cmd->add_option("--measured", va.measured, "Kineto traces (.json or .json.gz)")
      ->required();
  validate_cmd->add_option("--format", va.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  ReplayArgs ra;
  replay_cmd->add_option("--measured", ra.measured, "a Kineto trace (.json or .json.gz)")
      ->required();
  replay_cmd->add_option("--hardware", ra.hardware,
                         "replay on this profile: measured durations move to it by the rate "
                         "that bounds each kernel class (default: as measured)");
  replay_cmd->add_option("--measured-on", ra.measured_on,
                         "the profile the trace was measured on (default: from its device name)");
  replay_cmd->add_option("--topology", ra.topology, "topology preset name");
  replay_cmd->add_option("--iteration", ra.iteration,
                         "iteration index (default: the second, or the only one)");
  replay_cmd->add_flag("--all", ra.all, "replay every iteration");
  replay_cmd->add_option("--out", ra.out,
                         "write summary.json, ranks.csv and timeline.json.gz here");
  SynthArgs sy;
  synth_cmd->add_option("scenario", sy.scenario, "scenario YAML file")->required();
  synth_cmd->add_option("--set", sy.sets, "override a scenario key: key.path=value (repeatable)");
  synth_cmd->add_option("--chakra", sy.chakra, "output prefix: DIR/NAME -> DIR/NAME.<rank>.et")
      ->required();
  std::string inspect_path;
  inspect_cmd->add_option("file", inspect_path, "a .et file (gzip accepted)")->required();
  SimulateArgs sa;
  sim_cmd->add_option("--chakra", sa.chakra, "input prefix of <prefix>.<rank>.et")->required();
  sim_cmd->add_option("--hardware", sa.hardware, "hardware profile name or path")->required();
  sim_cmd->add_option("--topology", sa.topology, "topology preset name")->required();
  sim_cmd->add_flag("--replay-durations", sa.replay_durations,
                    "time compute nodes by their recorded duration_micros");
  sim_cmd->add_flag("--rendezvous", sa.rendezvous,
                    "sends wait for their recv (NCCL); default: sends complete on delivery, "
                    "as in ASTRA-sim");
  sim_cmd->add_option("--out", sa.out, "write summary.json, ranks.csv and timeline.json.gz here");
  for (auto* cmd : {run_cmd, check_cmd}) {
    cmd->add_option("scenario", a.scenario, "scenario YAML file")->required();
    cmd->add_option("--set", a.sets, "override a scenario key: key.path=value (repeatable)");
  }
  run_cmd->add_option("--out", a.out, "write summary.json, ranks.csv and timeline.json.gz here");
  run_cmd->add_flag("--no-share", a.no_share,
                    "simulate every rank on its own instead of one instance per rank class");
  run_cmd->add_option("--timeline-ranks", a.timeline_ranks,
                      "ranks the timeline shows, e.g. 0,8,16-31 (default: up to 16 simulated)");
  run_cmd->add_flag("--perf", a.perf, "print synthesis and simulation speed");
  run_cmd->add_flag("--quiet", a.quiet, "print nothing but errors");
  run_cmd
      ->add_option("--without", a.without,
                   "switch a modelled effect off to see what it contributes (repeatable; "
                   "`tessera list` names them)")
      ->delimiter(',');
  cmp_cmd->add_option("scenario", c.scenario, "scenario YAML file")->required();
  cmp_cmd->add_option("--set", c.sets, "override a scenario key: key.path=value (repeatable)");
  cmp_cmd
      ->add_option("--schedules", c.schedules,
                   "comma-separated: " + synth::schedule::schedule_spec_forms())
      ->required();
  cmp_cmd->add_option("--sweep", c.sweep,
                      "rerun the comparison for each value of one scenario key: "
                      "key.path=v1,v2,... (applied after --set); prints a speedup matrix");
  cmp_cmd->add_option("--out", c.out,
                      "write compare.csv, compare.json and per-schedule reports; with --sweep: "
                      "sweep.csv, sweep.json, sweep.svg (speedup chart) and a summary/ranks per "
                      "run, but no timelines");
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
  if (cmp_cmd->parsed()) {
    return compare(c);
  }
  if (se.command->parsed()) {
    return search(se, world);
  }
  if (rs.command->parsed()) {
    return runs(rs);
  }
  if (ca.command->parsed()) {
    return calibrate(ca);
  }
  if (synth_cmd->parsed()) {
    return synth_chakra(sy);
  }
  if (inspect_cmd->parsed()) {
    return inspect(inspect_path);
  }
  if (sim_cmd->parsed()) {
    return simulate_chakra(sa);
  }
  if (validate_cmd->parsed()) {
    return validate(va);
  }
  if (replay_cmd->parsed()) {
    return replay(ra);
  }
  return list(list_params);
}

}  // namespace
}  // namespace tessera::cli

int main(int argc, char** argv) {
  using namespace tessera;
  // Under mpirun every rank meets the same bad input; rank 0 alone says so. The world outlives
  // the handlers, so that rank 0 prints before MPI_Finalize lets another rank exit: mpirun
  // ends the whole job at the first rank that exits non-zero.
  std::optional<experiments::search::MpiWorld> world;
  int rank = 0;
  try {
    world.emplace(argc, argv);
    rank = world->rank();
    return cli::dispatch(argc, argv, *world);
  } catch (const base::InputError& e) {
    if (rank == 0) {
      std::cerr << e.what() << "\n";
    }
    return 2;
  } catch (const base::SimulationError& e) {
    std::cerr << "simulation failed: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}
