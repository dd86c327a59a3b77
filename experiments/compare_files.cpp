// SPDX-License-Identifier: Apache-2.0
#include "experiments/compare_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "sim/report/chart.h"

namespace tessera::experiments {

namespace {

// The configuration columns of compare.csv and sweep.csv: every field but the schedule, which
// has its own column first (a row whose configuration is unknown leaves them empty).
constexpr const char* kConfigColumns =
    "tp,pp,dp,sp,micro_batch,global_batch,seq_len,recompute,attention,devices,hardware,topology";

std::string config_cells(const Row& r) {
  std::string out;
  std::size_t n = 0;
  for (const sim::report::ConfigField& f : r.config) {
    if (f.name != "schedule") {
      const std::string cell = sim::report::csv_cell(f.value);
      out += "," + (f.value.is_string() ? csv_quote(cell) : cell);
      ++n;
    }
  }
  const auto columns = static_cast<std::size_t>(
      std::count(kConfigColumns, kConfigColumns + std::strlen(kConfigColumns), ',') + 1);
  for (; n < columns; ++n) {
    out += ",";
  }
  return out;
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json config = nlohmann::json::object();
  for (const sim::report::ConfigField& f : r.config) {
    config[f.name] = f.value;
  }
  return {{"schedule", r.schedule},
          {"config", config},
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

std::optional<double> parse_number(const std::string& s) {
  double v = 0.0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// One schedule's speedups across the values, as a chart series; `gaps` is set where it has no
// point at a value where the scenario is valid.
sim::report::ChartSeries series_of(const SweepResult& res, std::size_t i,
                                   const std::vector<double>& xs, bool& gaps) {
  sim::report::ChartSeries series{.name = res.labels[i], .points = {}};
  bool ran = false;
  for (std::size_t k = 0; k < res.points.size(); ++k) {
    const SweepPoint& p = res.points[k];
    sim::report::ChartPoint pt{.x_label = p.value,
                               .x = xs.empty() ? static_cast<double>(k) : xs[k]};
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
  return series;
}

}  // namespace

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

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  if (!out) {
    throw base::InputError(base::SourceLoc{path, 0, 0}, "cannot write this file");
  }
  return out;
}

std::string file_safe(std::string spec) {
  std::replace(spec.begin(), spec.end(), ':', '-');
  return spec;
}

void write_compare_tables(const std::string& dir, const std::vector<Row>& rows) {
  std::ofstream csv = open_for_writing(dir + "/compare.csv");
  csv << "schedule,step_time_s,mfu,bubble_fraction,exposed_comm_fraction,exposed_encoder_s,"
         "peak_hbm_bytes,out_of_memory,speedup,skipped,"
      << kConfigColumns << "\n";
  nlohmann::json js = nlohmann::json::array();
  for (const Row& r : rows) {
    csv << fmt::format("\"{}\",{:.9g},{:.6g},{:.6g},{:.6g},{},{:.0f},{},{:.6g},\"{}\"{}\n",
                       r.schedule, r.step_s, r.mfu, r.bubble, r.exposed_comm,
                       r.exposed_encoder_s < 0.0 ? "" : fmt::format("{:.9g}", r.exposed_encoder_s),
                       r.peak_hbm, r.oom ? 1 : 0, r.speedup, r.skipped, config_cells(r));
    js.push_back(row_json(r));
  }
  open_for_writing(dir + "/compare.json") << js.dump(2) << "\n";
}

void write_sweep_tables(const std::string& dir, const SweepResult& res) {
  std::ofstream csv = open_for_writing(dir + "/sweep.csv");
  csv << "key,value,schedule,step_time_s,mfu,bubble_fraction,exposed_comm_fraction,"
         "peak_hbm_bytes,out_of_memory,speedup,skipped,"
      << kConfigColumns << "\n";
  nlohmann::json runs = nlohmann::json::array();
  for (const SweepPoint& p : res.points) {
    for (std::size_t i = 0; i < res.labels.size(); ++i) {
      Row r = p.skipped.empty() ? p.rows[i] : Row{.schedule = res.labels[i], .skipped = p.skipped};
      csv << fmt::format("{},{},{},{:.9g},{:.6g},{:.6g},{:.6g},{:.0f},{},{:.6g},{}{}\n",
                         csv_quote(res.sweep.key), csv_quote(p.value), csv_quote(r.schedule),
                         r.step_s, r.mfu, r.bubble, r.exposed_comm, r.peak_hbm, r.oom ? 1 : 0,
                         r.speedup, csv_quote(r.skipped), config_cells(r));
      nlohmann::json row = row_json(r);
      row["key"] = res.sweep.key;
      row["value"] = p.value;
      runs.push_back(std::move(row));
    }
  }
  nlohmann::json js = {{"scenario", res.name},       {"key", res.sweep.key},
                       {"values", res.sweep.values}, {"schedules", res.labels},
                       {"baseline", res.labels[0]},  {"runs", runs}};
  open_for_writing(dir + "/sweep.json") << js.dump(2) << "\n";
}

void write_sweep_chart(const std::string& path, const SweepResult& res) {
  namespace rp = sim::report;
  const std::string& key = res.sweep.key;
  rp::LineChart chart;
  chart.title = fmt::format("{}: speedup vs {} across {}", res.name, res.labels[0], key);
  chart.y_title = fmt::format("speedup vs {}", res.labels[0]);
  chart.reference_y = 1.0;
  chart.flag_note = "out of memory";
  std::vector<double> xs;
  for (const std::string& v : res.sweep.values) {
    if (auto x = parse_number(v)) {
      xs.push_back(*x);
    }
  }
  bool numeric = xs.size() == res.sweep.values.size();
  if (!numeric) {
    xs.clear();
  }
  chart.x_scale = numeric ? rp::numeric_x_scale(xs) : rp::XScale::kCategorical;
  chart.x_title = chart.x_scale == rp::XScale::kLog2 ? key + " (log2 scale)" : key;
  bool gaps = false;  // a schedule missing at a value where others run
  for (std::size_t i = 0; i < res.labels.size(); ++i) {
    chart.series.push_back(series_of(res, i, xs, gaps));
  }
  std::vector<std::string> invalid;
  for (const SweepPoint& p : res.points) {
    if (!p.skipped.empty()) {
      invalid.push_back(p.value);
    }
  }
  if (!invalid.empty()) {
    chart.notes.push_back(fmt::format("Not plotted: {} = {} (the scenario is invalid there).", key,
                                      fmt::join(invalid, ", ")));
  }
  if (gaps) {
    chart.notes.push_back(
        fmt::format("Missing points: that schedule (or {}, the baseline) cannot run at that value.",
                    res.labels[0]));
  }
  rp::write_line_chart_svg(path, chart);
}

}  // namespace tessera::experiments
