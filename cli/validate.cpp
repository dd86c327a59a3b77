// SPDX-License-Identifier: Apache-2.0
// `tessera validate SCENARIO --measured trace_rank*.json[.gz]`: puts a scenario's simulated
// step next to measured PyTorch profiler (Kineto) traces (measured::compare_trace) and prints
// the comparison as text or JSON.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/pipeline.h"
#include "measured/kineto_reader.h"
#include "measured/trace_comparison.h"

namespace tessera::cli {

namespace kineto = measured;
using measured::ComparedRow;
using measured::ComparedSide;
using measured::TraceComparison;

namespace {

std::string fmt_opt_bytes(const std::optional<double>& b) {
  return b ? base::format_bytes(*b) : std::string("n/a");
}

void print_text(const std::string& scenario, const TraceComparison& c) {
  fmt::print("{} vs {} (measured rank {}, simulated rank {})\n", scenario, c.file, c.rank,
             c.sim_rank);
  fmt::print("  {}; measured values are per-iteration means over {} iterations\n", c.note,
             c.iterations);
  fmt::print("  {:<32} {:>10} {:>10} {:>12} {:>12}  {}\n", "per step", "measured", "simulated",
             "measured", "simulated", "match");
  for (const ComparedRow& r : c.rows) {
    if (r.section == "compute") {
      fmt::print("  {:<32} {:>10.1f} {:>10.0f} {:>12} {:>12}  {}\n", r.category + " kernels",
                 r.measured.count, r.simulated.count, base::format_seconds(r.measured.time_s),
                 base::format_seconds(r.simulated.time_s), r.match);
    } else {
      fmt::print("  {:<32} {:>10.1f} {:>10.0f} {:>12} {:>12}  {}\n", r.category + " collectives",
                 r.measured.count, r.simulated.count, fmt_opt_bytes(r.measured.bytes),
                 fmt_opt_bytes(r.simulated.bytes), r.match);
    }
  }
  fmt::print("  {:<32} {:>10} {:>10} {:>12} {:>12}\n", "step time", "", "",
             base::format_seconds(c.measured_step_s), base::format_seconds(c.simulated_step_s));
  fmt::print("  {:<32} {:>10} {:>10} {:>12} {:>12}{}\n", "peak memory", "", "",
             fmt_opt_bytes(c.measured_peak), base::format_bytes(c.simulated_peak),
             c.measured_peak ? "" : "  (no memory events in the trace)");
}

nlohmann::json side_json(const ComparedSide& s, bool comm) {
  nlohmann::json j = {{"count", s.count}};
  if (comm) {
    j["bytes"] = s.bytes ? nlohmann::json(*s.bytes) : nlohmann::json(nullptr);
  } else {
    j["time_s"] = s.time_s;
  }
  return j;
}

nlohmann::json to_json(const TraceComparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ComparedRow& r : c.rows) {
    bool comm = r.section == "communication";
    rows.push_back({{"section", r.section},
                    {"category", r.category},
                    {"measured", side_json(r.measured, comm)},
                    {"simulated", side_json(r.simulated, comm)},
                    {"match", r.match}});
  }
  return {{"file", c.file},
          {"measured_rank", c.rank},
          {"simulated_rank", c.sim_rank},
          {"iterations", c.iterations},
          {"note", c.note},
          {"rows", rows},
          {"step_time_s", {{"measured", c.measured_step_s}, {"simulated", c.simulated_step_s}}},
          {"peak_memory_bytes",
           {{"measured", c.measured_peak ? nlohmann::json(*c.measured_peak) : nlohmann::json()},
            {"simulated", c.simulated_peak}}}};
}

}  // namespace

int validate(const ValidateArgs& a) {
  check_input_file("scenario", a.scenario);
  for (const std::string& f : a.measured) {
    check_input_file("measured trace", f);
  }
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  // Read every trace first: a bad file fails before the simulation runs.
  std::vector<kineto::KinetoTrace> traces;
  for (const std::string& f : a.measured) {
    traces.push_back(kineto::read_kineto(f));
  }
  experiments::Outcome o = experiments::simulate_scenario(s, true, false);
  nlohmann::json all = nlohmann::json::array();
  for (const kineto::KinetoTrace& t : traces) {
    TraceComparison c = measured::compare_trace(t, o.graph, o.stats);
    if (a.format == "json") {
      all.push_back(to_json(c));
    } else {
      print_text(s.name, c);
    }
  }
  if (a.format == "json") {
    nlohmann::json out = {
        {"scenario", s.name}, {"simulated_step_time_s", o.stats.step_time_s}, {"traces", all}};
    std::cout << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace tessera::cli
