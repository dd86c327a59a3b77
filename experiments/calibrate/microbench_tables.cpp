// SPDX-License-Identifier: Apache-2.0
#include "experiments/calibrate/microbench_tables.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"

namespace tessera::experiments::calibrate {

namespace {

MicrobenchEntry table_entry(const std::string& id, const base::YamlNode& table) {
  MicrobenchEntry e{id, false, {}, {}};
  for (const base::YamlNode& c : table.at("columns").items()) {
    e.columns.push_back(c.as_string());
  }
  for (const base::YamlNode& r : table.at("rows").items()) {
    std::vector<base::YamlNode> cells = r.items();
    if (cells.size() != e.columns.size()) {
      r.fail(fmt::format("a row of {} values in a table of {} columns", cells.size(),
                         e.columns.size()));
    }
    e.rows.push_back(std::move(cells));
  }
  return e;
}

MicrobenchEntry scalar_entry(const std::string& id, const base::YamlNode& entry) {
  MicrobenchEntry e{id, true, {}, {{}}};
  if (std::optional<base::YamlNode> shape = entry.find("shape"); shape && shape->is_map()) {
    for (const std::string& k : shape->keys()) {
      e.columns.push_back(k);
      e.rows[0].push_back(shape->at(k));
    }
  }
  e.columns.emplace_back("value");
  e.rows[0].push_back(entry.at("value"));
  return e;
}

}  // namespace

std::size_t MicrobenchEntry::column(const std::string& name, const base::YamlNode& at) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) {
    at.fail(fmt::format("'{}' has no column '{}'", id, name),
            fmt::format("its columns: {}", fmt::join(columns, ", ")));
  }
  return static_cast<std::size_t>(it - columns.begin());
}

std::optional<base::YamlNode> MicrobenchEntry::cell(std::size_t row, std::size_t column) const {
  const base::YamlNode& c = rows.at(row).at(column);
  return c.is_null() ? std::nullopt : std::optional<base::YamlNode>(c);
}

MicrobenchTables::MicrobenchTables(const std::string& folder) : folder_(folder) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const fs::directory_entry& f : fs::directory_iterator(folder)) {
    if (f.path().extension() == ".yaml") {
      files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    YAML::Node root;
    try {
      root = YAML::LoadFile(f.string());
    } catch (const YAML::Exception& e) {
      throw base::InputError(base::SourceLoc{f.string(), e.mark.line + 1, e.mark.column + 1},
                             "malformed YAML: " + e.msg);
    }
    if (!root.IsSequence()) {
      continue;  // not a list of entries (a fits file)
    }
    auto origin = std::make_shared<base::YamlNode::Origin>();
    origin->file = f.string();
    const base::YamlNode doc(root, origin, "");
    for (const base::YamlNode& entry : doc.items()) {
      const std::string id = entry.at("id").as_string();
      entries_.emplace(
          id, entry.has("table") ? table_entry(id, entry.at("table")) : scalar_entry(id, entry));
    }
  }
}

const MicrobenchEntry& MicrobenchTables::at(const base::YamlNode& ref) const {
  const std::string id = ref.as_string();
  const auto it = entries_.find(id);
  if (it == entries_.end()) {
    std::vector<std::string_view> ids;
    for (const auto& [k, v] : entries_) {
      ids.push_back(k);
    }
    const std::string guess = base::nearest(id, ids);
    ref.fail(fmt::format("no microbenchmark '{}' in {}", id, folder_),
             guess.empty() ? "" : fmt::format("did you mean '{}'?", guess));
  }
  return it->second;
}

}  // namespace tessera::experiments::calibrate
