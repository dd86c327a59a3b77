// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/comm_groups.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "base/error.h"
#include "graph/chakra/et_decode.h"

namespace tessera::graph::chakra {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw base::InputError(base::SourceLoc{path}, message,
                         R"(expected {"<group id>": [<rank>, ...], ...})");
}

std::vector<std::int32_t> parse_members(const std::string& path, const std::string& id,
                                        const nlohmann::json& list, std::int32_t num_ranks) {
  if (!list.is_array() || list.empty()) {
    fail(path, "group '" + id + "' must be a non-empty list of ranks");
  }
  std::vector<std::int32_t> ranks;
  for (const auto& r : list) {
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() >= num_ranks) {
      fail(path, "group '" + id + "': " + r.dump() + " is not a rank in [0, " +
                     std::to_string(num_ranks) + ")");
    }
    ranks.push_back(r.get<std::int32_t>());
  }
  std::sort(ranks.begin(), ranks.end());
  if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
    fail(path, "group '" + id + "' lists a rank twice");
  }
  return ranks;
}

// Numeric ids first, by value; then any other text, lexicographically.
bool id_less(const std::string& a, const std::string& b) {
  auto numeric = [](const std::string& s) {
    return !s.empty() && s.size() < 19 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  };
  if (numeric(a) != numeric(b)) {
    return numeric(a);
  }
  return numeric(a) ? std::stoll(a) < std::stoll(b) : a < b;
}

}  // namespace

std::string comm_groups_path(const std::string& prefix) {
  return prefix + ".groups.json";
}

std::string pg_name_of(std::int32_t group) {
  return std::to_string(group + 1);
}

void write_comm_groups(const ExecGraph& graph, const std::string& path) {
  std::ofstream out(path);
  out << "{";
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    std::vector<std::int32_t> ranks = graph.groups[g].ranks;
    std::sort(ranks.begin(), ranks.end());
    out << (g == 0 ? "\n" : ",\n")
        << fmt::format("  \"{}\": [{}]", pg_name_of(static_cast<std::int32_t>(g)),
                       fmt::join(ranks, ", "));
  }
  out << "\n}\n";
  if (!out) {
    throw base::InputError(base::SourceLoc{path}, "cannot write the communicator groups file");
  }
}

CommGroups read_comm_groups(const std::string& path, std::int32_t num_ranks) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(load_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("invalid JSON: ") + e.what());
  }
  if (!doc.is_object()) {
    fail(path, "the communicator groups must be a JSON object");
  }
  CommGroups groups;
  for (const auto& [id, list] : doc.items()) {
    groups[id] = parse_members(path, id, list, num_ranks);
  }
  return groups;
}

GroupTable::GroupTable(std::optional<CommGroups> json, std::string json_path,
                       std::int32_t num_ranks)
    : json_(std::move(json)), json_path_(std::move(json_path)), num_ranks_(num_ranks) {}

std::int32_t GroupTable::use(const std::string& pg_name, std::int32_t rank, const EtTrace& t,
                             const EtNode& n) {
  const std::string id = pg_name.empty() ? "0" : pg_name;
  auto [it, inserted] = index_of_.try_emplace(id, static_cast<std::int32_t>(names_.size()));
  if (inserted) {
    names_.push_back(id);
    users_.emplace_back();
  }
  auto& users = users_[static_cast<std::size_t>(it->second)];
  if (users.empty() || users.back() != rank) {
    users.push_back(rank);
  }
  if (json_ && json_->count(id) != 0 &&
      !std::binary_search(json_->at(id).begin(), json_->at(id).end(), rank)) {
    throw base::InputError(base::SourceLoc{t.path},
                           describe(n) + ": pg_name '" + id + "' names a group that " + json_path_ +
                               " does not list rank " + std::to_string(rank) + " in");
  }
  return it->second;
}

std::vector<std::int32_t> GroupTable::members(std::size_t index) const {
  const std::string& id = names_[index];
  if (json_ && json_->count(id) != 0) {
    return json_->at(id);
  }
  if (id == "0") {
    std::vector<std::int32_t> all(static_cast<std::size_t>(num_ranks_));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  std::vector<std::int32_t> inferred = users_[index];
  std::sort(inferred.begin(), inferred.end());
  inferred.erase(std::unique(inferred.begin(), inferred.end()), inferred.end());
  return inferred;
}

std::vector<std::int32_t> GroupTable::finish(ExecGraph& graph) const {
  std::vector<std::size_t> order(names_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return id_less(names_[a], names_[b]); });
  std::vector<std::int32_t> remap(names_.size());
  for (std::size_t i : order) {
    remap[i] = static_cast<std::int32_t>(graph.groups.size());
    graph.groups.push_back(Group{GroupKind::kDP, members(i)});
  }
  return remap;
}

}  // namespace tessera::graph::chakra
