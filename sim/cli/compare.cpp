// SPDX-License-Identifier: Apache-2.0
// `tessera compare`: one workload under several pipeline schedules, side by side.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/base/error.h"
#include "sim/cli/commands.h"
#include "sim/cli/pipeline.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::cli {

namespace {

// "1f1b", "gpipe", "interleaved:3" (v model chunks per rank; default 2).
synth::ScheduleConfig parse_schedule(const std::string& spec) {
  synth::ScheduleConfig cfg;
  std::string name = spec.substr(0, spec.find(':'));
  if (name == "1f1b") {
    cfg.kind = synth::ScheduleKind::k1F1B;
  } else if (name == "gpipe") {
    cfg.kind = synth::ScheduleKind::kGpipe;
  } else if (name == "zb-h1") {
    cfg.kind = synth::ScheduleKind::kZbH1;
  } else if (name == "interleaved") {
    cfg.kind = synth::ScheduleKind::kInterleaved;
    cfg.chunks = 2;
    if (spec.find(':') != std::string::npos) {
      try {
        cfg.chunks = std::stoll(spec.substr(spec.find(':') + 1));
      } catch (const std::exception&) {
        cfg.chunks = 0;
      }
    }
  } else {
    throw base::InputError(fmt::format(
        "--schedules: unknown schedule '{}'; expected 1f1b, gpipe, zb-h1 or interleaved[:chunks]",
        spec));
  }
  return cfg;
}

// Why `cfg` cannot run this scenario, or "".
std::string unsupported(const synth::Scenario& s, const synth::ScheduleConfig& cfg) {
  if (s.model.layers % (s.parallel.pp * std::max<std::int64_t>(cfg.chunks, 1)) != 0) {
    return fmt::format("pp*chunks = {}*{} does not divide {} layers", s.parallel.pp, cfg.chunks,
                       s.model.layers);
  }
  try {
    synth::schedule::check_schedule(cfg, static_cast<int>(s.parallel.pp),
                                    static_cast<int>(s.microbatches()));
  } catch (const base::InputError& e) {
    return e.message();
  }
  return "";
}

struct Row {
  std::string schedule;
  std::string skipped;  // reason, when the schedule cannot run this workload
  double step_s = 0.0;
  double mfu = 0.0;
  double bubble = 0.0;        // mean idle / step time
  double exposed_comm = 0.0;  // mean exposed communication / step time
  double peak_hbm = 0.0;
  bool oom = false;
  double speedup = 0.0;
};

std::string file_safe(std::string s) {
  std::replace(s.begin(), s.end(), ':', '-');
  return s;
}

void print_table(const synth::Scenario& s, const std::vector<Row>& rows) {
  fmt::print("{}: {} schedules on {} devices ({}, {} microbatches per replica)\n", s.name,
             rows.size(), s.cluster.devices, parallelism_label(s), s.microbatches());
  fmt::print("  {:<18} {:>11} {:>7} {:>8} {:>14} {:>13} {:>8}\n", "schedule", "step time", "MFU",
             "bubble", "exposed comm", "peak HBM", "speedup");
  for (const Row& r : rows) {
    if (!r.skipped.empty()) {
      fmt::print("  {:<18} cannot run: {}\n", r.schedule, r.skipped);
      continue;
    }
    fmt::print("  {:<18} {:>11} {:>6.1f}% {:>7.1f}% {:>13.1f}% {:>13} {:>7.3f}x{}\n", r.schedule,
               base::format_seconds(r.step_s), 100.0 * r.mfu, 100.0 * r.bubble,
               100.0 * r.exposed_comm, base::format_bytes(r.peak_hbm), r.speedup,
               r.oom ? "  out of memory" : "");
  }
}

void write_tables(const std::string& dir, const std::vector<Row>& rows) {
  std::filesystem::create_directories(dir);
  std::ofstream csv(dir + "/compare.csv");
  csv << "schedule,step_time_s,mfu,bubble_fraction,exposed_comm_fraction,peak_hbm_bytes,"
         "out_of_memory,speedup,skipped\n";
  nlohmann::json js = nlohmann::json::array();
  for (const Row& r : rows) {
    csv << fmt::format("\"{}\",{:.9g},{:.6g},{:.6g},{:.6g},{:.0f},{},{:.6g},\"{}\"\n", r.schedule,
                       r.step_s, r.mfu, r.bubble, r.exposed_comm, r.peak_hbm, r.oom ? 1 : 0,
                       r.speedup, r.skipped);
    js.push_back({{"schedule", r.schedule},
                  {"step_time_s", r.step_s},
                  {"mfu", r.mfu},
                  {"bubble_fraction", r.bubble},
                  {"exposed_comm_fraction", r.exposed_comm},
                  {"peak_hbm_bytes", r.peak_hbm},
                  {"speedup", r.speedup},
                  {"skipped", r.skipped}});
  }
  std::ofstream(dir + "/compare.json") << js.dump(2) << "\n";
}

}  // namespace

int compare(const CompareArgs& a) {
  synth::Scenario base_scenario = synth::load_scenario(a.scenario, a.sets);
  std::vector<Row> rows;
  std::stringstream list(a.schedules);
  for (std::string spec; std::getline(list, spec, ',');) {
    synth::Scenario s = base_scenario;
    s.schedule = parse_schedule(spec);
    Row row;
    row.schedule = synth::schedule_label(s.schedule);
    row.skipped = unsupported(s, s.schedule);
    if (row.skipped.empty()) {
      Outcome o = simulate_scenario(s, true, !a.out.empty());
      double t = o.stats.step_time_s;
      row.step_s = t;
      row.mfu = o.metrics.mfu;
      row.bubble = o.metrics.idle_s / t;
      for (double e : o.metrics.exposed_comm_s) {
        row.exposed_comm += e / t;
      }
      row.peak_hbm = o.metrics.peak_hbm;
      row.oom = o.metrics.oom;
      if (!a.out.empty()) {
        write_reports(a.out, o, "-" + file_safe(spec));
      }
    }
    rows.push_back(row);
  }
  if (rows.empty()) {
    throw base::InputError("--schedules: give at least one schedule");
  }
  for (Row& r : rows) {
    r.speedup = r.skipped.empty() && rows[0].skipped.empty() ? rows[0].step_s / r.step_s : 0.0;
  }
  print_table(base_scenario, rows);
  if (!a.out.empty()) {
    write_tables(a.out, rows);
    fmt::print("  wrote {}/compare.csv, compare.json and one summary/ranks/timeline per schedule\n",
               a.out);
  }
  return 0;
}

}  // namespace tessera::cli
