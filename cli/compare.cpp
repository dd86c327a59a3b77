// SPDX-License-Identifier: Apache-2.0
// `tessera compare`: one workload under several pipeline schedules, side by side; with --sweep,
// once per value of one scenario key, plus a speedup matrix and chart.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/pipeline.h"
#include "sim/report/chart.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::cli {

namespace {

// The integer after "name:" in `spec`, `fallback` without one.
std::int64_t spec_count(const std::string& spec, std::int64_t fallback) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) {
    return fallback;
  }
  std::int64_t v = 0;
  const char* first = spec.data() + colon + 1;
  const char* last = spec.data() + spec.size();
  auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || end != last || first == last) {
    throw base::InputError(
        fmt::format("--schedules: '{}': expected a whole number after ':'", spec));
  }
  return v;
}

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
  } else if (name == "zb-h2") {
    cfg.kind = synth::ScheduleKind::kZbH2;
  } else if (name == "dualpipev") {
    cfg.kind = synth::ScheduleKind::kDualPipeV;
  } else if (name == "dualpipe") {
    cfg.kind = synth::ScheduleKind::kDualPipe;
  } else if (name ==
             "transpose") {  // Mpipe: "transpose[:round_robin|min|greedy][:recompute|owner]"
    cfg.encoder = synth::EncoderPlacement::kTranspose;
    std::stringstream parts(spec.substr(name.size()));
    for (std::string part; std::getline(parts, part, ':');) {
      if (part.empty()) {
        continue;
      }
      if (part == "round_robin" || part == "min" || part == "greedy") {
        cfg.owners = part == "min"      ? synth::OwnerMode::kMin
                     : part == "greedy" ? synth::OwnerMode::kGreedy
                                        : synth::OwnerMode::kRoundRobin;
      } else if (part == "recompute" || part == "owner") {
        cfg.encoder_backward =
            part == "owner" ? synth::EncoderBackward::kOwner : synth::EncoderBackward::kRecompute;
      } else {
        throw base::InputError(
            fmt::format("--schedules: '{}' in '{}' is neither an owner map (round_robin, min, "
                        "greedy) nor an encoder backward (recompute, owner)",
                        part, spec));
      }
    }
  } else if (name == "encoder-separate") {  // DistTrain-style: the encoder on n devices more
    cfg.encoder = synth::EncoderPlacement::kSeparate;
    cfg.encoder_devices = spec_count(spec, 1);
    if (cfg.encoder_devices < 1) {
      throw base::InputError(
          fmt::format("--schedules: '{}': expected encoder-separate:N with N >= 1", spec));
    }
  } else if (name == "encoder-stages") {  // the encoder as its own first pipeline stage(s)
    cfg.encoder = synth::EncoderPlacement::kStages;
    cfg.encoder_stages = spec_count(spec, 1);
  } else if (name == "interleaved") {
    cfg.kind = synth::ScheduleKind::kInterleaved;
    cfg.chunks = spec_count(spec, 2);
  } else {
    throw base::InputError(
        fmt::format("--schedules: unknown schedule '{}'; expected 1f1b, gpipe, zb-h1, zb-h2, "
                    "dualpipev, dualpipe, interleaved[:chunks], "
                    "transpose[:round_robin|min|greedy][:recompute|owner], encoder-stages[:k] "
                    "or encoder-separate[:devices]",
                    spec));
  }
  return cfg;
}

// Why `cfg` cannot run this scenario, or "".
std::string unsupported(const synth::Scenario& s, const synth::ScheduleConfig& cfg) {
  synth::schedule::Placement place(cfg, static_cast<int>(s.parallel.pp));
  if (cfg.encoder != synth::EncoderPlacement::kInline && !s.encoder.present) {
    return "the scenario has no encoder to place";
  }
  if (s.encoder.present && cfg.kind == synth::ScheduleKind::kDualPipe) {
    return "an encoder region is not supported with DualPipe yet";
  }
  if (cfg.encoder == synth::EncoderPlacement::kStages) {
    bool flat = cfg.kind == synth::ScheduleKind::kGpipe || cfg.kind == synth::ScheduleKind::k1F1B ||
                cfg.kind == synth::ScheduleKind::kZbH1;
    if (!flat || cfg.encoder_stages < 1 || cfg.encoder_stages >= s.parallel.pp ||
        s.encoder.layers < cfg.encoder_stages ||
        s.model.layers < s.parallel.pp - cfg.encoder_stages) {
      return fmt::format("the encoder cannot take {} of {} pipeline stages here",
                         cfg.encoder_stages, s.parallel.pp);
    }
  } else if (s.model.layers % place.stages_per_pipe() != 0) {
    return fmt::format("its {} pipeline stages do not divide {} layers", place.stages_per_pipe(),
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
  // Multimodal scenarios: step time minus the same LLM's without an encoder, under the same
  // body schedule on the same devices (< 0: never; the column is absent without an encoder).
  double exposed_encoder_s = -1.0;
};

// The step time of the scenario's LLM alone under `cfg`'s body schedule, memoized by the
// body's label: the reference the "exposed encoder" column subtracts.
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

void measure(const Outcome& o, Row& row) {
  double t = o.stats.step_time_s;
  row.step_s = t;
  row.mfu = o.metrics.mfu;
  row.bubble = o.metrics.idle_s / t;
  for (double e : o.metrics.exposed_comm_s) {
    row.exposed_comm += e / t;
  }
  row.peak_hbm = o.metrics.peak_hbm;
  row.oom = o.metrics.oom;
}

// One schedule's row: the workload under `cfg` (with the encoder's own devices on top),
// simulated unless it cannot run; `report` sees every run that finished.
Row run_schedule(const synth::Scenario& base, const synth::ScheduleConfig& cfg, LlmOnly& llm_only,
                 bool timeline, const std::function<void(const Outcome&)>& report) {
  synth::Scenario s = base;
  s.schedule = cfg;
  s.cluster.devices += s.encoder_devices();
  Row row;
  row.schedule = synth::schedule_label(cfg);
  row.skipped = unsupported(s, cfg);
  if (!row.skipped.empty()) {
    return row;
  }
  try {
    Outcome o = simulate_scenario(s, true, timeline);
    measure(o, row);
    if (s.encoder.present) {
      row.exposed_encoder_s = o.stats.step_time_s - llm_only.step_s(s);
    }
    report(o);
  } catch (const base::InputError& e) {  // e.g. a topology that cannot hold the devices
    row.skipped = e.message();
  }
  return row;
}

// Speedup vs the first row; 0 where either side cannot run.
void fill_speedups(std::vector<Row>& rows) {
  for (Row& r : rows) {
    r.speedup = r.skipped.empty() && rows[0].skipped.empty() ? rows[0].step_s / r.step_s : 0.0;
  }
}

std::string file_safe(std::string s) {
  std::replace(s.begin(), s.end(), ':', '-');
  return s;
}

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
             rows.size(), s.cluster.devices, parallelism_label(s), s.microbatches());
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

nlohmann::json row_json(const Row& r) {
  return {{"schedule", r.schedule},
          {"step_time_s", r.step_s},
          {"mfu", r.mfu},
          {"bubble_fraction", r.bubble},
          {"exposed_comm_fraction", r.exposed_comm},
          {"exposed_encoder_s", r.exposed_encoder_s < 0.0 ? nlohmann::json(nullptr)
                                                          : nlohmann::json(r.exposed_encoder_s)},
          {"peak_hbm_bytes", r.peak_hbm},
          {"out_of_memory", r.oom},
          {"speedup", r.speedup},
          {"skipped", r.skipped}};
}

void write_tables(const std::string& dir, const std::vector<Row>& rows) {
  std::filesystem::create_directories(dir);
  std::ofstream csv(dir + "/compare.csv");
  csv << "schedule,step_time_s,mfu,bubble_fraction,exposed_comm_fraction,exposed_encoder_s,"
         "peak_hbm_bytes,out_of_memory,speedup,skipped\n";
  nlohmann::json js = nlohmann::json::array();
  for (const Row& r : rows) {
    csv << fmt::format("\"{}\",{:.9g},{:.6g},{:.6g},{:.6g},{},{:.0f},{},{:.6g},\"{}\"\n",
                       r.schedule, r.step_s, r.mfu, r.bubble, r.exposed_comm,
                       r.exposed_encoder_s < 0.0 ? "" : fmt::format("{:.9g}", r.exposed_encoder_s),
                       r.peak_hbm, r.oom ? 1 : 0, r.speedup, r.skipped);
    js.push_back(row_json(r));
  }
  std::ofstream(dir + "/compare.json") << js.dump(2) << "\n";
}

// ---- `--sweep key.path=v1,v2,...`: the comparison once per value of one scenario key. ----

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) {
    return "";
  }
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

struct Sweep {
  std::string key;
  std::vector<std::string> values;
};

Sweep parse_sweep(const std::string& arg) {
  auto bad = [&arg](const std::string& why) {
    return base::InputError(
        fmt::format("--sweep {}: {}; expected key.path=v1,v2,... (e.g. model.layers=4,8)",
                    arg.empty() ? "''" : arg, why));
  };
  auto eq = arg.find('=');
  if (eq == std::string::npos) {
    throw bad("no '='");
  }
  Sweep sw;
  sw.key = trim(std::string_view(arg).substr(0, eq));
  if (sw.key.empty() || sw.key.front() == '.' || sw.key.back() == '.' ||
      sw.key.find("..") != std::string::npos) {
    throw bad(fmt::format("'{}' is not a key path", sw.key));
  }
  std::string list = arg.substr(eq + 1);
  if (trim(list).empty()) {
    throw bad("no values");
  }
  std::stringstream ss(list + ",");  // so a trailing comma leaves an empty value to reject
  for (std::string v; std::getline(ss, v, ',');) {
    v = trim(v);
    if (v.empty()) {
      throw bad(fmt::format("value {} is empty", sw.values.size() + 1));
    }
    if (std::find(sw.values.begin(), sw.values.end(), v) != sw.values.end()) {
      throw bad(fmt::format("value '{}' is given twice", v));
    }
    sw.values.push_back(v);
  }
  return sw;
}

std::optional<double> parse_number(const std::string& s) {
  double v = 0.0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// A value as a file-name part: anything but [A-Za-z0-9._+-] becomes '_'.
std::string value_file_part(const std::string& v) {
  std::string out = v;
  for (char& c : out) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 &&
        std::string_view("._+-").find(c) == std::string_view::npos) {
      c = '_';
    }
  }
  return out;
}

std::string csv_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  return out + "\"";
}

std::string context_of(const synth::Scenario& s) {
  return fmt::format("{} devices ({}, {} microbatches per replica)", s.cluster.devices,
                     parallelism_label(s), s.microbatches());
}

struct SweepPoint {
  std::string value;
  std::string file_part;  // in per-run report names
  std::string skipped;    // why the scenario is invalid at this value; rows are then empty
  std::string context;    // devices, parallelism and microbatches
  std::vector<Row> rows;  // one per schedule
};

// Whether schedule `i` has a speedup at this value: it and the baseline both run.
bool has_speedup(const SweepPoint& p, std::size_t i) {
  return p.skipped.empty() && p.rows[i].skipped.empty() && p.rows[0].skipped.empty();
}

// "1.067x", "1.067x oom", "cannot run" or "n/a" (the baseline cannot run). `pad_oom` leaves room
// for the " oom" mark so that the numbers of a column line up.
std::string matrix_cell(const SweepPoint& p, std::size_t i, bool pad_oom = false) {
  if (!p.skipped.empty() || !p.rows[i].skipped.empty()) {
    return "cannot run";
  }
  if (!has_speedup(p, i)) {
    return "n/a";
  }
  std::string mark = p.rows[i].oom ? " oom" : (pad_oom ? "    " : "");
  return fmt::format("{:.3f}x{}", p.rows[i].speedup, mark);
}

void print_sweep(const std::string& name, const Sweep& sw, const std::vector<std::string>& labels,
                 const std::vector<SweepPoint>& points) {
  std::size_t w = sw.key.size();
  for (const std::string& v : sw.values) {
    w = std::max(w, v.size());
  }
  std::string context;
  bool uniform = true;
  for (const SweepPoint& p : points) {
    if (p.skipped.empty()) {
      uniform = uniform && (context.empty() || context == p.context);
      context = context.empty() ? p.context : context;
    }
  }
  fmt::print("{}: {} schedules x {} values of {}", name, labels.size(), points.size(), sw.key);
  if (uniform) {
    fmt::print(" on {}", context);
  }
  std::size_t sw_w = 18;  // the schedule column
  bool enc = false;
  for (const SweepPoint& p : points) {
    for (const Row& r : p.rows) {
      sw_w = std::max(sw_w, r.schedule.size());
      enc = enc || r.exposed_encoder_s >= 0.0;
    }
  }
  fmt::print("\n  {:<{}}  {:<{}} {}\n", sw.key, w, "schedule", sw_w, figure_headers(enc));
  for (const SweepPoint& p : points) {
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

  // The matrix: values down, schedules across, speedup vs the first schedule in the cells.
  fmt::print("\n  speedup vs {}\n  {:<{}}", labels[0], sw.key, w);
  std::vector<std::size_t> cw;
  for (const std::string& l : labels) {
    cw.push_back(std::max<std::size_t>(l.size(), 10));
    fmt::print("  {:>{}}", l, cw.back());
  }
  fmt::print("\n");
  bool any_oom = false;
  bool any_na = false;
  for (const SweepPoint& p : points) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      std::string cell = matrix_cell(p, i);
      any_oom = any_oom || cell.ends_with(" oom");
      any_na = any_na || cell == "n/a";
    }
  }
  for (const SweepPoint& p : points) {
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

void write_sweep_tables(const std::string& dir, const std::string& name, const Sweep& sw,
                        const std::vector<std::string>& labels,
                        const std::vector<SweepPoint>& points) {
  std::filesystem::create_directories(dir);
  std::ofstream csv(dir + "/sweep.csv");
  if (!csv) {
    throw base::InputError(base::SourceLoc{dir, 0, 0}, "cannot write into this folder");
  }
  csv << "value,schedule,step_time_s,mfu,bubble_fraction,exposed_comm_fraction,peak_hbm_bytes,"
         "out_of_memory,speedup,skipped\n";
  nlohmann::json runs = nlohmann::json::array();
  for (const SweepPoint& p : points) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      Row r = p.skipped.empty() ? p.rows[i] : Row{.schedule = labels[i], .skipped = p.skipped};
      csv << fmt::format("{},{},{:.9g},{:.6g},{:.6g},{:.6g},{:.0f},{},{:.6g},{}\n",
                         csv_quote(p.value), csv_quote(r.schedule), r.step_s, r.mfu, r.bubble,
                         r.exposed_comm, r.peak_hbm, r.oom ? 1 : 0, r.speedup,
                         csv_quote(r.skipped));
      nlohmann::json row = row_json(r);
      row["value"] = p.value;
      runs.push_back(std::move(row));
    }
  }
  nlohmann::json js = {{"scenario", name},    {"key", sw.key},         {"values", sw.values},
                       {"schedules", labels}, {"baseline", labels[0]}, {"runs", runs}};
  std::ofstream(dir + "/sweep.json") << js.dump(2) << "\n";
}

void write_sweep_chart(const std::string& path, const std::string& name, const Sweep& sw,
                       const std::vector<std::string>& labels,
                       const std::vector<SweepPoint>& points) {
  namespace rp = sim::report;
  rp::LineChart chart;
  chart.title = fmt::format("{}: speedup vs {} across {}", name, labels[0], sw.key);
  chart.y_title = fmt::format("speedup vs {}", labels[0]);
  chart.reference_y = 1.0;
  chart.flag_note = "out of memory";
  std::vector<double> xs;
  for (const std::string& v : sw.values) {
    if (auto x = parse_number(v)) {
      xs.push_back(*x);
    }
  }
  bool numeric = xs.size() == sw.values.size();
  chart.x_scale = numeric ? rp::numeric_x_scale(xs) : rp::XScale::kCategorical;
  chart.x_title = chart.x_scale == rp::XScale::kLog2 ? sw.key + " (log2 scale)" : sw.key;
  bool gaps = false;  // a schedule missing at a value where others run
  std::vector<std::string> invalid;
  for (const SweepPoint& p : points) {
    if (!p.skipped.empty()) {
      invalid.push_back(p.value);
    }
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    rp::ChartSeries series{.name = labels[i], .points = {}};
    bool ran = false;
    for (std::size_t k = 0; k < points.size(); ++k) {
      const SweepPoint& p = points[k];
      rp::ChartPoint pt{.x_label = p.value, .x = numeric ? xs[k] : static_cast<double>(k)};
      if (has_speedup(p, i)) {
        pt.y = p.rows[i].speedup;
        pt.flagged = p.rows[i].oom;
        ran = true;
      } else {
        gaps = gaps || p.skipped.empty();
      }
      series.points.push_back(pt);
    }
    if (!ran) {
      series.name += " (cannot run)";
    }
    chart.series.push_back(std::move(series));
  }
  if (!invalid.empty()) {
    chart.notes.push_back(fmt::format("Not plotted: {} = {} (the scenario is invalid there).",
                                      sw.key, fmt::join(invalid, ", ")));
  }
  if (gaps) {
    chart.notes.push_back(
        fmt::format("Missing points: that schedule (or {}, the baseline) cannot run at that value.",
                    labels[0]));
  }
  rp::write_line_chart_svg(path, chart);
}

// Whether `e`, from loading the scenario with `assignment` applied, is about that value itself
// (a misspelt name, a wrong type, a key that does not exist) rather than about the scenario
// it makes (e.g. pp no longer dividing the layers).
bool about_value(const base::InputError& e, const std::string& assignment) {
  const std::string set = "--set " + assignment;
  return e.loc().file == set || e.message().starts_with(set + ":");
}

// The error's message and hint (the did-you-mean), without its location.
std::string message_and_hint(const base::InputError& e) {
  std::string full = e.what();
  auto at = full.find(e.message());
  return at == std::string::npos ? e.message() : full.substr(at);
}

// Every value's scenario, loaded before anything is simulated. A value that is not valid
// input is bad input (base::InputError naming the --sweep value); a value that makes the
// scenario invalid is that point's "cannot run" (nullopt), unless every value does.
std::vector<std::optional<synth::Scenario>> load_sweep(const CompareArgs& a, const Sweep& sw,
                                                       std::vector<SweepPoint>& points) {
  std::vector<std::optional<synth::Scenario>> out;
  std::optional<base::InputError> first_error;
  for (SweepPoint& p : points) {
    std::vector<std::string> overrides = a.sets;
    std::string assignment = fmt::format("{}={}", sw.key, p.value);
    overrides.push_back(assignment);
    try {
      out.emplace_back(synth::load_scenario(a.scenario, overrides));
    } catch (const base::InputError& e) {
      if (about_value(e, assignment)) {
        throw base::InputError(base::SourceLoc{"--sweep " + *a.sweep, 0, 0},
                               fmt::format("value '{}': {}", p.value, message_and_hint(e)));
      }
      p.skipped = e.message();
      if (!first_error) {
        first_error = e;
      }
      out.emplace_back(std::nullopt);
    }
  }
  if (std::none_of(out.begin(), out.end(), [](const auto& s) { return s.has_value(); })) {
    throw *first_error;  // no value gives a valid scenario: most likely the file is wrong
  }
  return out;
}

int compare_sweep(const CompareArgs& a) {
  Sweep sw = parse_sweep(*a.sweep);
  std::vector<std::string> specs;
  std::stringstream list(a.schedules);
  for (std::string spec; std::getline(list, spec, ',');) {
    specs.push_back(spec);
  }
  if (specs.empty()) {
    throw base::InputError("--schedules: give at least one schedule");
  }
  std::vector<synth::ScheduleConfig> configs;
  std::vector<std::string> labels;
  for (const std::string& spec : specs) {
    configs.push_back(parse_schedule(spec));
    labels.push_back(synth::schedule_label(configs.back()));
  }

  // Per-run report names: the value's file part, made unique by position if two collide.
  std::vector<SweepPoint> points(sw.values.size());
  std::vector<std::string> parts;
  for (const std::string& v : sw.values) {
    parts.push_back(value_file_part(v));
  }
  bool unique = std::set<std::string>(parts.begin(), parts.end()).size() == parts.size();
  for (std::size_t k = 0; k < points.size(); ++k) {
    points[k].value = sw.values[k];
    points[k].file_part = unique ? parts[k] : fmt::format("{}-{}", k + 1, parts[k]);
  }

  std::vector<std::optional<synth::Scenario>> scenarios = load_sweep(a, sw, points);
  std::string name;
  LlmOnly llm_only;
  for (std::size_t k = 0; k < points.size(); ++k) {
    SweepPoint& p = points[k];
    if (!scenarios[k]) {
      continue;
    }
    const synth::Scenario& base_scenario = *scenarios[k];
    name = base_scenario.name;
    p.context = context_of(base_scenario);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      p.rows.push_back(
          run_schedule(base_scenario, configs[i], llm_only, false, [&](const Outcome& o) {
            if (a.out.empty()) {
              return;
            }
            std::string suffix = fmt::format("-{}-{}", p.file_part, file_safe(specs[i]));
            std::filesystem::create_directories(a.out);
            std::ofstream(a.out + "/summary" + suffix + ".json")
                << sim::report::summary_json(o.label, o.graph, o.stats, o.metrics).dump(2) << "\n";
            sim::report::write_ranks_csv(a.out + "/ranks" + suffix + ".csv", o.stats);
          }));
    }
    fill_speedups(p.rows);
  }

  print_sweep(name, sw, labels, points);
  if (!a.out.empty()) {
    write_sweep_tables(a.out, name, sw, labels, points);
    write_sweep_chart(a.out + "/sweep.svg", name, sw, labels, points);
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
  std::vector<Row> rows;
  LlmOnly llm_only;
  std::stringstream list(a.schedules);
  for (std::string spec; std::getline(list, spec, ',');) {
    rows.push_back(run_schedule(base_scenario, parse_schedule(spec), llm_only, !a.out.empty(),
                                [&](const Outcome& o) {
                                  if (!a.out.empty()) {
                                    write_reports(a.out, o, "-" + file_safe(spec));
                                  }
                                }));
  }
  if (rows.empty()) {
    throw base::InputError("--schedules: give at least one schedule");
  }
  fill_speedups(rows);
  print_table(base_scenario, rows);
  if (!a.out.empty()) {
    write_tables(a.out, rows);
    fmt::print("  wrote {}/compare.csv, compare.json and one summary/ranks/timeline per schedule\n",
               a.out);
  }
  return 0;
}

}  // namespace tessera::cli
