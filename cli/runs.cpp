// SPDX-License-Identifier: Apache-2.0
// `tessera runs FILE`: every run of a runs file simulated beside its measurement, the runs
// that cannot be simulated with their reasons, and the errors by hardware and precision and
// by source (experiments/runs/, docs/runs.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/runs/evaluate.h"
#include "experiments/runs/files.h"
#include "experiments/runs/pairs.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::cli {

namespace {

namespace rn = experiments::runs;

std::string percent(double x) {
  return fmt::format("{:+.1f}%", 100.0 * x);
}

void print_runs(const std::vector<rn::RunResult>& results) {
  fmt::print("| run | hardware | precision | measured | predicted | error | MFU |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const rn::RunResult& r : results) {
    if (r.simulated) {
      fmt::print("| {} | {} | {} | {:.4g} s | {:.4g} s | {} | {:.1f}% |\n", r.run->id,
                 r.run->hardware, r.run->precision, r.measured_s, r.predicted_s, percent(r.error()),
                 100.0 * r.mfu);
    }
  }
  fmt::print("\n");
}

void print_skipped(const std::vector<rn::RunResult>& results) {
  bool any = false;
  for (const rn::RunResult& r : results) {
    if (!r.simulated) {
      fmt::print("{}  {}: {}\n", any ? "" : "not simulated:\n", r.run->id, rn::status_of(r));
      any = true;
    }
  }
  if (any) {
    fmt::print("\n");
  }
}

// The runs not simulated, counted by reason (most frequent first, then by reason).
void print_skip_reasons(const std::vector<rn::RunResult>& results) {
  std::map<std::string, int> count;
  for (const rn::RunResult& r : results) {
    if (!r.simulated) {
      ++count[r.failure.empty() ? r.run->skip : "simulation failed: " + r.failure];
    }
  }
  std::vector<std::pair<int, std::string>> order;
  for (const auto& [reason, n] : count) {
    order.emplace_back(-n, reason);
  }
  std::sort(order.begin(), order.end());
  if (!order.empty()) {
    fmt::print("| not simulated, because | runs |\n|---|---|\n");
  }
  for (const auto& [n, reason] : order) {
    fmt::print("| {} | {} |\n", reason, -n);
  }
}

void print_groups(const std::string& title, const std::vector<rn::GroupStats>& groups) {
  fmt::print("| {} | runs | median abs. error | max abs. error | signed mean | optimistic |\n",
             title);
  fmt::print("|---|---|---|---|---|---|\n");
  for (const rn::GroupStats& g : groups) {
    fmt::print("| {} | {} | {:.1f}% | {:.1f}% | {} | {} of {} |\n", g.name, g.count,
               100.0 * g.median_abs, 100.0 * g.max_abs, percent(g.mean_signed), g.optimistic,
               g.count);
  }
  fmt::print("\n");
}

std::string changes(const rn::RunPair& p) {
  if (p.differences.empty()) {
    return "nothing: measured twice";
  }
  std::string s;
  for (const rn::Difference& d : p.differences) {
    s +=
        fmt::format("{}`{}`: {} -> {}", s.empty() ? "" : ", ", d.key,
                    d.first.empty() ? "(unset)" : d.first, d.second.empty() ? "(unset)" : d.second);
  }
  return s;
}

// The pairs of runs whose scenarios differ in at most two keys: the second run's step time
// over the first's, measured and predicted.
void print_pairs(const std::vector<rn::RunPair>& pairs) {
  fmt::print("| run | against | differs in | measured | predicted | error |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const rn::RunPair& p : pairs) {
    fmt::print("| {} | {} | {} | {:.3f}x | {:.3f}x | {} |\n", p.second->run->id, p.first->run->id,
               changes(p), p.measured_ratio(), p.predicted_ratio(), percent(p.error()));
  }
  fmt::print("\n");
}

// Each run's error (unless --summary), the groups, and the runs not simulated.
void print_tables(const RunsArgs& a, const std::vector<rn::RunResult>& results) {
  if (!a.summary) {
    print_runs(results);
  }
  print_groups("hardware, precision", rn::group_stats(results, [](const rn::Run& r) {
                 return fmt::format("{}, {}", r.hardware, r.precision);
               }));
  print_groups("source", rn::group_stats(results, [](const rn::Run& r) { return r.source; }));
  if (a.summary) {
    print_skip_reasons(results);
  } else {
    print_skipped(results);
  }
}

}  // namespace

void add_runs_command(CLI::App& app, RunsArgs& a) {
  a.command = app.add_subcommand(
      "runs", "simulate the measured runs of a runs file and report each one's error");
  a.command->add_option("file", a.file, "runs file (YAML corpus schema, or CSV)")->required();
  a.command->add_option("--recipes", a.recipes,
                        "recipes file: what the recipes the runs cite set, where a run does "
                        "not say (tests/validation/runs/recipes.yaml)");
  a.command->add_option("--jobs", a.jobs, "simulations at once (default: every core)")
      ->check(CLI::Range(1, 1024));
  a.command->add_option("--out", a.out,
                        "write runs.csv and scenarios/<id>.yaml (the scenario each run became)");
  a.command->add_option("--profile", a.profiles,
                        "NAME=FILE: runs on profile NAME simulate on FILE instead (a calibrated "
                        "profile; repeatable)");
  a.command->add_flag("--summary", a.summary,
                      "print only the tables by group and why runs were not simulated");
  a.command->add_flag("--pairs", a.pairs,
                      "print instead the pairs of runs whose scenarios differ in one or two "
                      "keys, or none: each change's measured and predicted step-time ratio");
}

int runs(const RunsArgs& a) {
  check_input_file("runs file", a.file);
  if (!a.recipes.empty()) {
    check_input_file("recipes file", a.recipes);
  }
  rn::RunsFile file = rn::read_runs(a.file, a.recipes);  // a malformed file writes nothing
  for (const std::string& spec : a.profiles) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw base::InputError(fmt::format("--profile '{}': expected NAME=FILE", spec));
    }
    check_profile_arg("--profile", spec.substr(eq + 1));
    const hw::Profile profile = hw::load_profile(spec.substr(eq + 1));
    if (rn::use_profile(file, spec.substr(0, eq), profile) == 0) {
      throw base::InputError(
          fmt::format("--profile '{}': no run of {} is on '{}'", spec, a.file, spec.substr(0, eq)));
    }
  }
  if (!a.out.empty()) {
    prepare_output_dir("--out", a.out);
  }
  const std::vector<rn::RunResult> results = rn::evaluate(file, a.jobs);
  int simulated = 0;
  for (const rn::RunResult& r : results) {
    simulated += r.simulated ? 1 : 0;
  }
  fmt::print("{}: {} runs, {} simulated\n\n", a.file, results.size(), simulated);
  if (a.pairs) {
    print_pairs(rn::run_pairs(results));
  } else {
    print_tables(a, results);
  }
  if (!a.out.empty()) {
    rn::write_runs_csv(a.out + "/runs.csv", results);
    rn::write_scenarios(a.out + "/scenarios", file);
    fmt::print("wrote {}/runs.csv and {}/scenarios/\n", a.out, a.out);
  }
  return 0;
}

}  // namespace tessera::cli
