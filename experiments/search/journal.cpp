// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/journal.h"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "base/error.h"

namespace tessera::experiments::search {

namespace {

constexpr const char* kFile = "/points.jsonl";

// The lines of DIR/points.jsonl that parse, in order; a last line cut short is dropped.
std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (in.peek() == std::char_traits<char>::eof()) {
        break;  // the interrupted write of the last point
      }
      throw base::InputError(base::SourceLoc{path, static_cast<int>(out.size()) + 1, 1},
                             "not a line of a search journal");
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The points of a journal's lines after the header; base::InputError at the line of one that
// is not a point.
std::vector<PointResult> points_of(const std::vector<nlohmann::json>& lines,
                                   const std::string& path) {
  std::vector<PointResult> out;
  for (std::size_t k = 1; k < lines.size(); ++k) {
    try {
      out.push_back(point_from_record(lines[k]));
    } catch (const nlohmann::json::exception& e) {
      throw base::InputError(base::SourceLoc{path, static_cast<int>(k) + 1, 1},
                             fmt::format("not a point of a search journal: {}", e.what()));
    }
  }
  return out;
}

// FNV-1a over the file's bytes, in hex: whether the scenario is the one a journal ran.
std::string content_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = 14695981039346656037ULL;
  for (char c; in.get(c);) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

nlohmann::json search_header(const Request& req, const Result& res) {
  nlohmann::json space = nlohmann::json::array();
  for (const AxisValues& a : res.space.axes()) {
    space.push_back({{"axis", a.axis->name}, {"values", a.values}});
  }
  return {{"search", 1},
          {"scenario", req.scenario},
          {"scenario_hash", content_hash(req.scenario)},
          {"sets", req.sets},
          {"name", res.name},
          {"devices", res.devices},
          {"space", space},
          {"usable_hbm", res.usable_hbm},
          {"memory_limit", res.memory_limit},
          {"prune", req.prune},
          {"shard", fmt::format("{}/{}", res.shard.index, res.shard.count)}};
}

Result result_of_header(const nlohmann::json& h) {
  Result res;
  res.name = h.at("name").get<std::string>();
  res.devices = h.at("devices").get<std::int64_t>();
  res.usable_hbm = h.at("usable_hbm").get<double>();
  res.memory_limit = h.at("memory_limit").get<double>();
  res.shard = parse_shard(h.at("shard").get<std::string>());
  std::vector<AxisValues> axes;
  for (const nlohmann::json& a : h.at("space")) {
    axes.push_back({&find_axis(a.at("axis").get<std::string>(), "a search journal"),
                    a.at("values").get<std::vector<std::string>>()});
  }
  res.space = Space(std::move(axes));
  return res;
}

nlohmann::json point_record(const PointResult& p) {
  nlohmann::json j = {{"index", p.index},
                      {"status", status_name(p.status)},
                      {"reason", p.reason},
                      {"detail", p.detail},
                      {"dp", p.dp},
                      {"microbatches", p.microbatches},
                      {"memory_bound", p.memory_bound}};
  if (p.status == Status::kRan || p.status == Status::kOverMemory) {
    j["run"] = {{"step_s", p.run.step_s},
                {"mfu", p.run.mfu},
                {"tokens_per_s", p.run.tokens_per_s},
                {"bubble", p.run.bubble},
                {"exposed_comm", p.run.exposed_comm},
                {"peak_hbm", p.run.peak_hbm},
                {"oom", p.run.oom}};
    j["stopped"] = p.stopped;
  }
  return j;
}

PointResult point_from_record(const nlohmann::json& j) {
  PointResult p;
  p.index = j.at("index").get<std::uint64_t>();
  p.status = parse_status(j.at("status").get<std::string>());
  p.reason = j.at("reason").get<std::string>();
  p.detail = j.at("detail").get<std::string>();
  p.dp = j.at("dp").get<std::int64_t>();
  p.microbatches = j.at("microbatches").get<std::int64_t>();
  p.memory_bound = j.at("memory_bound").get<double>();
  if (const auto r = j.find("run"); r != j.end()) {
    p.run.step_s = r->at("step_s").get<double>();
    p.run.mfu = r->at("mfu").get<double>();
    p.run.tokens_per_s = r->at("tokens_per_s").get<double>();
    p.run.bubble = r->at("bubble").get<double>();
    p.run.exposed_comm = r->at("exposed_comm").get<double>();
    p.run.peak_hbm = r->at("peak_hbm").get<double>();
    p.run.oom = r->at("oom").get<bool>();
    p.stopped = j.at("stopped").get<bool>();
  }
  return p;
}

Journal::Journal(const std::string& dir, const nlohmann::json& header) : path_(dir + kFile) {
  std::vector<nlohmann::json> lines;
  if (std::filesystem::exists(path_)) {
    lines = read_lines(path_);
  }
  if (!lines.empty() && lines.front() != header) {
    throw base::InputError(base::SourceLoc{path_, 1, 1},
                           "this folder holds the journal of a different search (another "
                           "scenario, --set, --devices, space, --max-memory or --shard)",
                           "give a new --out, or remove the folder to start this search afresh");
  }
  for (PointResult& p : points_of(lines, path_)) {
    finished_[p.index] = std::move(p);
  }
  // Rewritten whole, so that a line cut short is gone before anything is appended.
  out_.open(path_, std::ios::trunc);
  if (!out_) {
    throw base::InputError(base::SourceLoc{path_, 0, 0}, "cannot write this file");
  }
  out_ << header.dump() << "\n";
  for (const auto& [index, p] : finished_) {
    out_ << point_record(p).dump() << "\n";
  }
  out_.flush();
}

void Journal::append(const PointResult& p) {
  const std::string line = point_record(p).dump() + "\n";
  const std::lock_guard<std::mutex> lock(mutex_);
  out_ << line;
  out_.flush();
}

JournalFile read_journal(const std::string& dir) {
  const std::string path = dir + kFile;
  if (!std::filesystem::is_regular_file(path)) {
    throw base::InputError(base::SourceLoc{dir, 0, 0},
                           "no search journal (points.jsonl) in this folder",
                           "--merge takes the --out folders of `tessera search --shard` runs");
  }
  std::vector<nlohmann::json> lines = read_lines(path);
  if (lines.empty() || !lines.front().contains("search")) {
    throw base::InputError(base::SourceLoc{path, 1, 1}, "not a search journal: no header line");
  }
  JournalFile f;
  f.header = lines.front();
  f.points = points_of(lines, path);
  return f;
}

}  // namespace tessera::experiments::search
