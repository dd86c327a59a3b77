// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/files.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/units.h"
#include "experiments/compare_files.h"
#include "sim/report/chart.h"

namespace tessera::experiments::search {

namespace {

// Whether the point has a whole step's figures (a simulation stopped at the memory limit has
// only its peak).
bool whole_step(const PointResult& p) {
  return p.simulated() && !p.stopped;
}

// Each point's place in the ranking (1-based; 0: not ranked) and on the front.
std::vector<std::size_t> places(const std::vector<std::size_t>& order, std::size_t n) {
  std::vector<std::size_t> out(n, 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    out[order[k]] = k + 1;
  }
  return out;
}

nlohmann::json point_json(const Result& res, const PointResult& p, std::size_t rank, bool pareto) {
  nlohmann::json j = {{"index", p.index}, {"status", status_name(p.status)}};
  const std::vector<std::size_t> at = res.space.point(p.index);
  for (std::size_t k = 0; k < at.size(); ++k) {
    j["config"][res.space.axes()[k].axis->name] = res.space.axes()[k].values[at[k]];
  }
  if (p.dp > 0) {
    j["config"]["dp"] = p.dp;
  }
  if (!p.reason.empty()) {
    j["reason"] = p.reason;
    j["detail"] = p.detail;
  }
  if (p.memory_bound > 0.0) {
    j["memory_bound_bytes"] = p.memory_bound;
  }
  if (whole_step(p)) {
    j["microbatches"] = p.microbatches;
    j["step_time_s"] = p.run.step_s;
    j["mfu"] = p.run.mfu;
    j["tokens_per_s"] = p.run.tokens_per_s;
    j["peak_hbm_bytes"] = p.run.peak_hbm;
    j["bubble"] = p.run.bubble;
    j["exposed_comm"] = p.run.exposed_comm;
  }
  if (p.stopped) {
    j["stopped_at_bytes"] = p.run.peak_hbm;
  }
  if (rank > 0) {
    j["rank"] = rank;
  }
  j["pareto"] = pareto;
  return j;
}

int listing_place(Status s) {
  switch (s) {
    case Status::kInvalid:
      return 0;
    case Status::kDuplicate:
      return 1;
    case Status::kPruned:
      return 2;
    default:
      return 3;
  }
}

std::string example_of(const PointResult& p, const Result& res) {
  if (p.status != Status::kOverMemory) {
    return p.detail;
  }
  return fmt::format("{}{:.2f} GiB of the {:.2f} GiB allowed", p.stopped ? "over " : "",
                     p.run.peak_hbm / base::kBytesPerGiB, res.memory_limit / base::kBytesPerGiB);
}

}  // namespace

std::vector<Rejection> rejections(const Result& res) {
  // Keyed by the status's place in the listing (invalid, duplicate, pruned, over memory).
  std::map<std::pair<int, std::string>, Rejection> by;
  for (const PointResult& p : res.points) {
    if (p.status != Status::kRan) {
      const std::string reason = p.status == Status::kOverMemory ? "peak HBM" : p.reason;
      Rejection& r = by[{listing_place(p.status), reason}];
      if (r.count++ == 0) {
        r = {std::string(status_name(p.status)), reason, 1, example_of(p, res)};
      }
    }
  }
  std::vector<std::pair<int, Rejection>> listed;
  for (auto& [key, r] : by) {
    listed.emplace_back(key.first, std::move(r));
  }
  std::stable_sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.count > b.second.count;
  });
  std::vector<Rejection> out;
  for (auto& [place, r] : listed) {
    out.push_back(std::move(r));
  }
  return out;
}

void write_search_csv(const std::string& path, const Result& res) {
  std::ofstream out = open_for_writing(path);
  out << "index,status";
  for (const AxisValues& a : res.space.axes()) {
    out << "," << a.axis->name;
  }
  out << ",dp,microbatches,step_time_s,mfu,tokens_per_s,peak_hbm_gib,memory_bound_gib,bubble,"
         "exposed_comm,rank,pareto,reason,detail\n";
  const std::vector<std::size_t> rank = places(res.ranked, res.points.size());
  const std::vector<std::size_t> front = places(res.pareto, res.points.size());
  for (std::size_t i = 0; i < res.points.size(); ++i) {
    const PointResult& p = res.points[i];
    out << p.index << "," << status_name(p.status);
    const std::vector<std::size_t> at = res.space.point(p.index);
    for (std::size_t k = 0; k < at.size(); ++k) {
      out << "," << csv_quote(res.space.axes()[k].values[at[k]]);
    }
    out << "," << (p.dp > 0 ? std::to_string(p.dp) : "");
    if (whole_step(p)) {
      out << fmt::format(",{},{:.9g},{:.6f},{:.9g},{:.4f}", p.microbatches, p.run.step_s, p.run.mfu,
                         p.run.tokens_per_s, p.run.peak_hbm / base::kBytesPerGiB);
    } else if (p.stopped) {
      out << fmt::format(",,,,,{:.4f}", p.run.peak_hbm / base::kBytesPerGiB);  // where it stopped
    } else {
      out << ",,,,,";
    }
    out << ","
        << (p.memory_bound > 0.0 ? fmt::format("{:.4f}", p.memory_bound / base::kBytesPerGiB) : "");
    out << (whole_step(p) ? fmt::format(",{:.6f},{:.6f}", p.run.bubble, p.run.exposed_comm) : ",,");
    out << "," << (rank[i] > 0 ? std::to_string(rank[i]) : "") << "," << (front[i] > 0 ? 1 : 0)
        << "," << csv_quote(p.reason) << "," << csv_quote(p.detail) << "\n";
  }
}

void write_search_json(const std::string& path, const Result& res) {
  nlohmann::json j = {{"scenario", res.name},
                      {"devices", res.devices},
                      {"objective", objective_name(res.objective)},
                      {"usable_hbm_bytes", res.usable_hbm},
                      {"memory_limit_bytes", res.memory_limit},
                      {"points", res.points.size()}};
  for (const AxisValues& a : res.space.axes()) {
    j["space"][a.axis->name] = a.values;
  }
  j["rejected"] = nlohmann::json::array();
  for (const Rejection& r : rejections(res)) {
    j["rejected"].push_back(
        {{"status", r.status}, {"reason", r.reason}, {"count", r.count}, {"example", r.example}});
  }
  j["ranked"] = res.ranked;
  j["pareto"] = res.pareto;
  const std::vector<std::size_t> rank = places(res.ranked, res.points.size());
  const std::vector<std::size_t> front = places(res.pareto, res.points.size());
  j["results"] = nlohmann::json::array();
  for (std::size_t i = 0; i < res.points.size(); ++i) {
    j["results"].push_back(point_json(res, res.points[i], rank[i], front[i] > 0));
  }
  open_for_writing(path) << j.dump(1) << "\n";
}

void write_pareto_chart(const std::string& path, const Result& res) {
  sim::report::LineChart chart;
  chart.title = fmt::format("{} on {} devices: step time against peak HBM", res.name, res.devices);
  chart.x_title = "peak HBM (GiB)";
  chart.y_title = "step time (s)";
  chart.x_scale = sim::report::XScale::kLinear;
  sim::report::ChartSeries front{.name = "Pareto front", .points = {}};
  std::vector<std::size_t> by_memory = res.pareto;
  std::reverse(by_memory.begin(), by_memory.end());  // least memory first
  for (std::size_t i : by_memory) {
    const PointResult& p = res.points[i];
    front.points.push_back({.x_label = fmt::format("#{}", p.index),
                            .x = p.run.peak_hbm / base::kBytesPerGiB,
                            .y = p.run.step_s,
                            .flagged = false});
  }
  chart.series.push_back(std::move(front));
  chart.notes.push_back(
      fmt::format("{} of {} points fit in {:.1f} GiB; the front is the {} "
                  "that no other beats in both step time and memory",
                  res.ranked.size(), res.points.size(), res.memory_limit / base::kBytesPerGiB,
                  res.pareto.size()));
  sim::report::write_line_chart_svg(path, chart);
}

}  // namespace tessera::experiments::search
