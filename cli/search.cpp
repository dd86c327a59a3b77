// SPDX-License-Identifier: Apache-2.0
// `tessera search`: the ranked table of a search over parallel configurations and why the
// other points fell out. The search is experiments::search::run_search; this file parses its
// options and prints it.
#include "experiments/search/search.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

#include "base/error.h"
#include "base/units.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/search/files.h"
#include "experiments/search/journal.h"
#include "experiments/search/mpi_world.h"

namespace tessera::cli {

namespace {

namespace se = experiments::search;

// The configuration columns: tp, pp and dp always, then every other axis the space varies.
std::vector<std::string> config_columns(const se::Result& res) {
  std::vector<std::string> out{"tp", "pp", "dp"};
  for (const se::AxisValues& a : res.space.axes()) {
    if (a.values.size() > 1 && a.axis->name != "tp" && a.axis->name != "pp") {
      out.push_back(a.axis->name);
    }
  }
  return out;
}

std::string cell(const se::Result& res, const se::PointResult& p, const std::string& column) {
  return column == "dp" ? std::to_string(p.dp) : res.space.value(res.space.point(p.index), column);
}

void print_ranked(const se::Result& res, std::size_t top) {
  const std::vector<std::string> cols = config_columns(res);
  std::vector<std::size_t> width;
  const std::size_t shown = std::min(top, res.ranked.size());
  for (const std::string& c : cols) {
    std::size_t w = c.size();
    for (std::size_t k = 0; k < shown; ++k) {
      w = std::max(w, cell(res, res.points[res.ranked[k]], c).size());
    }
    width.push_back(w);
  }
  std::string head = fmt::format("  {:>4}", "rank");
  for (std::size_t c = 0; c < cols.size(); ++c) {
    head += fmt::format("  {:<{}}", cols[c], width[c]);
  }
  fmt::print("{}  {:>10} {:>6} {:>10} {:>7} {:>8}\n", head, "step time", "MFU", "peak HBM",
             "bubble", "exp.comm");
  for (std::size_t k = 0; k < shown; ++k) {
    const se::PointResult& p = res.points[res.ranked[k]];
    std::string line = fmt::format("  {:>4}", k + 1);
    for (std::size_t c = 0; c < cols.size(); ++c) {
      line += fmt::format("  {:<{}}", cell(res, p, cols[c]), width[c]);
    }
    fmt::print("{}  {:>10} {:>5.1f}% {:>10} {:>6.1f}% {:>7.1f}%\n", line,
               base::format_seconds(p.run.step_s), 100.0 * p.run.mfu,
               base::format_bytes(p.run.peak_hbm), 100.0 * p.run.bubble,
               100.0 * p.run.exposed_comm);
  }
}

void print_counts(const se::Result& res) {
  std::size_t valid = 0;
  std::size_t simulated = 0;
  for (const se::PointResult& p : res.points) {
    valid += p.status != se::Status::kInvalid && p.status != se::Status::kDuplicate ? 1 : 0;
    simulated += p.simulated() ? 1 : 0;
  }
  const double n = static_cast<double>(res.points.size());
  fmt::print(
      "  {} valid; {} pruned by the memory bound; {} simulated; {} fit in {} (of {} usable)\n"
      "  checked {:.0f} points/s ({:.3f} s), simulated {:.1f} points/s ({:.3f} s)\n",
      valid, valid - simulated, simulated, res.ranked.size(), base::format_bytes(res.memory_limit),
      base::format_bytes(res.usable_hbm), n / std::max(res.prepare_s, 1e-9), res.prepare_s,
      static_cast<double>(simulated) / std::max(res.simulate_s, 1e-9), res.simulate_s);
}

void print_rejections(const se::Result& res) {
  const std::vector<se::Rejection> rej = se::rejections(res);
  if (rej.empty()) {
    return;
  }
  fmt::print("rejected:\n");
  for (const se::Rejection& r : rej) {
    fmt::print("  {:>7}  {:<11} {:<26} e.g. {}\n", r.count, r.status, r.reason, r.example);
  }
}

}  // namespace

void add_search_command(CLI::App& app, SearchArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "search", "rank the parallel configurations of a workload on a number of devices");
  cmd->add_option("scenario", a.scenario, "scenario YAML file (the workload and cluster)");
  cmd->add_option("--set", a.sets, "override a scenario key: key.path=value (repeatable)");
  cmd->add_option("--devices", a.devices, "devices to search on (default: the scenario's)");
  std::string names;
  for (const se::Axis& axis : se::axes()) {
    names += (names.empty() ? "" : ", ") + axis.name;
  }
  cmd->add_option(
      "--vary", a.vary,
      "search these values of one axis: axis=v1,v2,... (repeatable; the axes: " + names + ")");
  cmd->add_option("--space", a.space, "a YAML file of axes and their values");
  cmd->add_option("--top", a.top, "rows of the ranked table (default 10)");
  cmd->add_option("--objective", a.objective, "step_time (default), mfu or tokens_per_s");
  cmd->add_option("--max-memory", a.max_memory,
                  "the fraction of usable HBM a configuration may use (default 1)");
  cmd->add_option("--jobs", a.jobs, "threads (default: every core)");
  cmd->add_flag("--no-prune", a.no_prune,
                "simulate every valid point's whole step, even where the memory bound says it "
                "cannot fit or a rank goes over the limit");
  cmd->add_option("--shard", a.shard,
                  "run shard i of N (from 0): the points whose number is i modulo N; needs "
                  "--out, and --merge joins the shards");
  cmd->add_option("--merge", a.merge,
                  "join the --out folders of a search's shards instead of searching")
      ->expected(1, -1);
  cmd->add_option("--out", a.out,
                  "write search.csv, search.json and search.svg here, with the journal of "
                  "finished points (points.jsonl) that a restarted search resumes from");
  a.command = cmd;
}

namespace {

// What a rank sends rank 0 in place of its points when its search failed, before the error.
constexpr std::string_view kFailed = "search failed\t";

// Under mpirun: rank r searches shard r/R (its journal in OUT/mpi-r-of-R) and rank 0 joins
// every rank's points into the whole search's result; the other ranks' results are empty.
se::Result search_over_ranks(se::Request req, const SearchArgs& a, const se::MpiWorld& world) {
  if (!a.shard.empty()) {
    throw base::InputError(
        fmt::format("--shard {}: under mpirun the ranks share the search out themselves", a.shard));
  }
  req.shard = {world.rank(), world.size()};
  if (!a.out.empty()) {
    req.out = fmt::format("{}/mpi-{}-of-{}", a.out, world.rank(), world.size());
    prepare_output_dir("--out", req.out);
  }
  // A rank whose search fails (its own journal of another search) still joins the gather, with
  // its error, so that no rank waits for it; every rank then stops with the first rank's.
  se::Result mine;
  std::string lines;
  try {
    mine = se::run_search(req);
    for (const se::PointResult& p : mine.points) {
      lines += se::point_record(p).dump() + "\n";
    }
  } catch (const base::InputError& e) {
    lines = std::string(kFailed) + e.what();
  }
  const std::vector<std::string> all = world.gather(lines);
  if (lines.starts_with(kFailed) && world.rank() != 0) {
    throw base::InputError(lines.substr(kFailed.size()));  // rank 0 says why
  }
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].starts_with(kFailed)) {
      std::string why = all[r].substr(kFailed.size());
      if (const std::size_t at = why.find("error: "); at != std::string::npos) {
        why.erase(at, 7);  // said once, before the rank
      }
      throw base::InputError(base::SourceLoc{fmt::format("MPI rank {}", r), 0, 0}, why);
    }
  }
  if (world.rank() != 0) {
    return {};
  }
  std::vector<se::PointResult> points;
  for (const std::string& part : all) {
    std::istringstream in(part);
    for (std::string line; std::getline(in, line);) {
      points.push_back(se::point_from_record(nlohmann::json::parse(line)));
    }
  }
  return se::join_shards(std::move(mine), std::move(points));
}

se::Result search_or_merge(const SearchArgs& a, const se::MpiWorld& world) {
  const se::Objective objective = se::parse_objective(a.objective);
  if (!a.merge.empty()) {
    if (!a.scenario.empty()) {
      throw base::InputError("--merge joins finished shards: give their folders, not a scenario");
    }
    return se::merge_searches(a.merge, objective);
  }
  if (a.scenario.empty()) {
    throw base::InputError("search: give a scenario file, or --merge and the shards' folders");
  }
  check_input_file("scenario", a.scenario);
  if (!a.space.empty()) {
    check_input_file("--space", a.space);
  }
  se::Request req{.scenario = a.scenario,
                  .sets = a.sets,
                  .devices = a.devices,
                  .vary = a.vary,
                  .space_file = a.space,
                  .objective = objective,
                  .max_memory = a.max_memory,
                  .jobs = a.jobs,
                  .prune = !a.no_prune,
                  .shard = a.shard.empty() ? se::Shard{} : se::parse_shard(a.shard),
                  .out = a.out};
  if (world.size() > 1) {
    return search_over_ranks(std::move(req), a, world);
  }
  if (se::launched_as_one_of_several()) {
    throw base::InputError(
        "this tessera was built without MPI, so its copies under mpirun cannot share a search: "
        "install libopenmpi-dev and rebuild, or run --shard i/N per process and --merge");
  }
  if (req.shard.count > 1 && a.out.empty()) {
    throw base::InputError(fmt::format(
        "--shard {}: needs --out, where the shard's journal waits for --merge", a.shard));
  }
  return se::run_search(req);
}

}  // namespace

int search(const SearchArgs& a, const se::MpiWorld& world) {
  if (!a.out.empty() && world.rank() == 0) {
    prepare_output_dir("--out", a.out);
  }
  const se::Result res = search_or_merge(a, world);
  if (world.rank() != 0) {
    return 0;  // rank 0 prints and writes the whole search
  }
  const bool shard = res.shard.count > 1;
  fmt::print("{}: {} points on {} devices{}, ranked by {}\n", res.name,
             shard ? res.points.size() : res.space.size(), res.devices,
             shard ? fmt::format(" (shard {}/{} of {})", res.shard.index, res.shard.count,
                                 res.space.size())
                   : "",
             se::objective_name(res.objective));
  print_counts(res);
  if (res.ranked.empty()) {
    fmt::print("  no configuration fits\n");
  } else {
    print_ranked(res, static_cast<std::size_t>(std::max(a.top, 1)));
  }
  print_rejections(res);
  if (shard) {
    fmt::print("  wrote {}/points.jsonl; join the shards with tessera search --merge DIR...\n",
               a.out);
  } else if (!a.out.empty()) {
    se::write_search_csv(a.out + "/search.csv", res);
    se::write_search_json(a.out + "/search.json", res);
    se::write_pareto_chart(a.out + "/search.svg", res);
    fmt::print("  wrote {}/search.csv, search.json, search.svg ({} points on the Pareto front)\n",
               a.out, res.pareto.size());
  }
  return 0;
}

}  // namespace tessera::cli
