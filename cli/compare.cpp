// SPDX-License-Identifier: Apache-2.0
// `tessera compare`: one workload under several pipeline schedules, side by side; with --sweep,
// once per value of one scenario key, plus a speedup matrix and chart. The runs are
// experiments::compare_schedules and run_sweep; this file prints them.
#include "experiments/compare.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/units.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/compare_files.h"
#include "experiments/schedule_spec.h"
#include "experiments/sweep.h"

namespace tessera::cli {

namespace {

using experiments::Row;
using experiments::SweepPoint;
using experiments::SweepResult;

// The headers of the columns after the schedule: step time, MFU, bubble, exposed comm,
// exposed encoder (`enc`), peak HBM, speedup.
std::string figure_headers(bool enc) {
  return fmt::format("{:>11} {:>7} {:>8} {:>14}{} {:>13} {:>8}", "step time", "MFU", "bubble",
                     "exposed comm", enc ? fmt::format(" {:>12}", "exposed enc") : "", "peak HBM",
                     "speedup");
}

// Those columns for one row; the speedup is against `first` ("n/a" when that cannot run).
std::string figures(const Row& r, const Row& first, bool enc) {
  std::string exposed_enc;
  if (enc) {
    exposed_enc = fmt::format(
        " {:>12}", r.exposed_encoder_s < 0.0 ? "-" : base::format_seconds(r.exposed_encoder_s));
  }
  return fmt::format("{:>11} {:>6.1f}% {:>7.1f}% {:>13.1f}%{} {:>13} {:>8}{}",
                     base::format_seconds(r.step_s), 100.0 * r.mfu, 100.0 * r.bubble,
                     100.0 * r.exposed_comm, exposed_enc, base::format_bytes(r.peak_hbm),
                     first.skipped.empty() ? fmt::format("{:.3f}x", r.speedup) : "n/a",
                     r.oom ? "  out of memory" : "");
}

void print_table(const synth::Scenario& s, const std::vector<Row>& rows) {
  fmt::print("{}: {} schedules on {} devices ({}, {} microbatches per replica)\n", s.name,
             rows.size(), s.cluster.devices, experiments::parallelism_label(s), s.microbatches());
  std::size_t w = 18;
  for (const Row& r : rows) {
    w = std::max(w, r.schedule.size());
  }
  bool enc = s.encoder.present;
  fmt::print("  {:<{}} {}\n", "schedule", w, figure_headers(enc));
  for (const Row& r : rows) {
    if (!r.skipped.empty()) {
      fmt::print("  {:<{}} cannot run: {}\n", r.schedule, w, r.skipped);
      continue;
    }
    fmt::print("  {:<{}} {}\n", r.schedule, w, figures(r, rows[0], enc));
  }
  if (enc) {
    fmt::print("  (exposed enc: step time minus the LLM's alone under the same body schedule)\n");
  }
}

// "1.067x", "1.067x oom", "cannot run" or "n/a" (the baseline cannot run). `pad_oom` leaves room
// for the " oom" mark so that the numbers of a column line up.
std::string matrix_cell(const SweepPoint& p, std::size_t i, bool pad_oom = false) {
  if (!p.skipped.empty() || !p.rows[i].skipped.empty()) {
    return "cannot run";
  }
  if (!experiments::has_speedup(p, i)) {
    return "n/a";
  }
  std::string mark = p.rows[i].oom ? " oom" : (pad_oom ? "    " : "");
  return fmt::format("{:.3f}x{}", p.rows[i].speedup, mark);
}

// The context shared by every valid point, or "" when they differ.
std::string uniform_context(const SweepResult& res) {
  std::string context;
  for (const SweepPoint& p : res.points) {
    if (p.skipped.empty()) {
      if (!context.empty() && context != p.context) {
        return "";
      }
      context = p.context;
    }
  }
  return context;
}

void print_sweep_rows(const SweepResult& res, std::size_t w, bool uniform) {
  std::size_t sw_w = 18;  // the schedule column
  bool enc = false;
  for (const SweepPoint& p : res.points) {
    for (const Row& r : p.rows) {
      sw_w = std::max(sw_w, r.schedule.size());
      enc = enc || r.exposed_encoder_s >= 0.0;
    }
  }
  fmt::print("\n  {:<{}}  {:<{}} {}\n", res.sweep.key, w, "schedule", sw_w, figure_headers(enc));
  for (const SweepPoint& p : res.points) {
    if (!p.skipped.empty()) {
      fmt::print("  {:<{}}  cannot run: {}\n", p.value, w, p.skipped);
      continue;
    }
    bool first = true;
    if (!uniform) {
      fmt::print("  {:<{}}  on {}\n", p.value, w, p.context);
      first = false;
    }
    for (const Row& r : p.rows) {
      fmt::print("  {:<{}}  {:<{}} ", first ? p.value : "", w, r.schedule, sw_w);
      first = false;
      if (!r.skipped.empty()) {
        fmt::print("cannot run: {}\n", r.skipped);
        continue;
      }
      fmt::print("{}\n", figures(r, p.rows[0], enc));
    }
  }
}

// The matrix: values down, schedules across, speedup vs the first schedule in the cells.
void print_matrix(const SweepResult& res, std::size_t w) {
  const auto& labels = res.labels;
  fmt::print("\n  speedup vs {}\n  {:<{}}", labels[0], res.sweep.key, w);
  std::vector<std::size_t> cw;
  for (const std::string& l : labels) {
    cw.push_back(std::max<std::size_t>(l.size(), 10));
    fmt::print("  {:>{}}", l, cw.back());
  }
  fmt::print("\n");
  bool any_oom = false;
  bool any_na = false;
  for (const SweepPoint& p : res.points) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      std::string cell = matrix_cell(p, i);
      any_oom = any_oom || cell.ends_with(" oom");
      any_na = any_na || cell == "n/a";
    }
  }
  for (const SweepPoint& p : res.points) {
    std::string line = fmt::format("  {:<{}}", p.value, w);
    for (std::size_t i = 0; i < labels.size(); ++i) {
      line += fmt::format("  {:>{}}", matrix_cell(p, i, any_oom), cw[i]);
    }
    fmt::print("{}\n", line.substr(0, line.find_last_not_of(' ') + 1));
  }
  if (any_oom) {
    fmt::print("  oom: the run's peak memory exceeds the device's HBM\n");
  }
  if (any_na) {
    fmt::print("  n/a: {} cannot run at that value, so there is no baseline\n", labels[0]);
  }
}

void print_sweep(const SweepResult& res) {
  std::size_t w = res.sweep.key.size();
  for (const std::string& v : res.sweep.values) {
    w = std::max(w, v.size());
  }
  std::string context = uniform_context(res);
  fmt::print("{}: {} schedules x {} values of {}", res.name, res.labels.size(), res.points.size(),
             res.sweep.key);
  if (!context.empty()) {
    fmt::print(" on {}", context);
  }
  print_sweep_rows(res, w, !context.empty());
  print_matrix(res, w);
}

int compare_sweep(const CompareArgs& a) {
  experiments::SweepRequest req{
      .scenario = a.scenario, .sets = a.sets, .sweep = *a.sweep, .schedules = a.schedules};
  SweepResult res = experiments::run_sweep(
      req, [&](const SweepPoint& p, const std::string& spec, const experiments::Outcome& o) {
        if (!a.out.empty()) {
          experiments::write_run_summary(
              a.out, o, fmt::format("-{}-{}", p.file_part, experiments::file_safe(spec)));
        }
      });
  print_sweep(res);
  if (!a.out.empty()) {
    experiments::write_sweep_tables(a.out, res);
    experiments::write_sweep_chart(a.out + "/sweep.svg", res);
    fmt::print("\n  wrote {}/sweep.csv, sweep.json, sweep.svg and a summary/ranks per run\n",
               a.out);
  }
  return 0;
}

}  // namespace

int compare(const CompareArgs& a) {
  check_input_file("scenario", a.scenario);
  if (!a.out.empty()) {
    prepare_output_dir("--out", a.out);
  }
  if (a.sweep) {
    return compare_sweep(a);
  }
  synth::Scenario base_scenario = synth::load_scenario(a.scenario, a.sets);
  std::vector<Row> rows = experiments::compare_schedules(
      base_scenario, experiments::split_schedules(a.schedules), !a.out.empty(),
      [&](const std::string& spec, const experiments::Outcome& o) {
        if (!a.out.empty()) {
          experiments::write_reports(a.out, o, "-" + experiments::file_safe(spec));
        }
      });
  print_table(base_scenario, rows);
  if (!a.out.empty()) {
    experiments::write_compare_tables(a.out, rows);
    fmt::print("  wrote {}/compare.csv, compare.json and one summary/ranks/timeline per schedule\n",
               a.out);
  }
  return 0;
}

}  // namespace tessera::cli
