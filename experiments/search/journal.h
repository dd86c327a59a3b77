// SPDX-License-Identifier: Apache-2.0
// A search's record of finished points, DIR/points.jsonl: a header line naming the search
// (the scenario file and its content's hash, the --set overrides, the devices, the space, the
// memory limit, pruning, the shard), then one line per finished point, appended and flushed as
// each finishes. A restarted search with the same --out reads it back and runs only what is
// missing; `--merge` joins the journals of a search's shards. Doubles are written so that they
// read back exactly, so a resumed or merged search writes the same files as an uninterrupted one.
#pragma once

#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/search/search.h"

namespace tessera::experiments::search {

// The header of a search's journal: what its points depend on (the scenario's content, not
// its path; the space; the memory limit; pruning) and the shard.
nlohmann::json search_header(const Request& req, const Result& res);
// A header's space, name, devices and memory figures as an empty result (its shard's points
// still to add).
Result result_of_header(const nlohmann::json& header);

nlohmann::json point_record(const PointResult& p);
PointResult point_from_record(const nlohmann::json& j);

class Journal {
 public:
  // Opens DIR/points.jsonl for `header`: the points a journal there with the same header holds
  // (a last line cut short by an interrupt is dropped), or none for a new one. A journal of a
  // different search is base::InputError: `--out` names another search's folder.
  Journal(const std::string& dir, const nlohmann::json& header);

  [[nodiscard]] const std::map<std::uint64_t, PointResult>& finished() const { return finished_; }
  // Appends and flushes one point; safe to call from several threads.
  void append(const PointResult& p);

 private:
  std::string path_;
  std::map<std::uint64_t, PointResult> finished_;
  std::ofstream out_;
  std::mutex mutex_;
};

struct JournalFile {
  nlohmann::json header;
  std::vector<PointResult> points;
};
// Reads DIR/points.jsonl (base::InputError naming it when absent or not a journal).
JournalFile read_journal(const std::string& dir);

}  // namespace tessera::experiments::search
