// SPDX-License-Identifier: Apache-2.0
// The recipes file: each entry's settings merged into the cases it names, where a case does
// not state them.
#include "experiments/runs/recipes.h"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <vector>

#include "experiments/runs/translate.h"

namespace tessera::experiments::runs {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 10> kEntryKeys = {
    "runs",        "config",      "source",  "inferred", "training",
    "parallelism", "row_differs", "unknown", "evidence", "notes"};
constexpr std::array<std::string_view, 2> kSections = {"training", "parallelism"};

// What a run leaves to its recipe: a key it does not state, or marks as not known ("[U] not in
// table; see recipe", "not stated").
bool unstated(const std::optional<YamlNode>& v) {
  return !v || unknown(*v);
}

std::map<std::string, YamlNode> cases_by_id(const YamlNode& cases) {
  std::map<std::string, YamlNode> out;
  for (const YamlNode& c : cases.items()) {
    if (auto id = c.is_map() ? c.find("id") : std::nullopt) {
      out.emplace(text_of(*id), c);
    }
  }
  return out;
}

// Takes the entry's keys into the case's sections where the case leaves them unstated;
// returns the keys taken, as section.key.
std::vector<std::string> merge(const YamlNode& entry, const YamlNode& c) {
  std::vector<std::string> taken;
  for (std::string_view section : kSections) {
    const std::optional<YamlNode> from = entry.find(section);
    if (!from) {
      continue;
    }
    from->expect_map();
    YamlNode to = c.at(section);
    to.expect_map();
    for (const std::string& key : from->keys()) {
      if (unstated(to.find(key))) {
        to.adopt(key, from->at(key));
        taken.push_back(fmt::format("{}.{}", section, key));
      }
    }
  }
  return taken;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> apply_recipes(const std::string& path, const YamlNode& cases) {
  const YamlNode root = YamlNode::load_file(path);
  root.expect_map();
  constexpr std::array<std::string_view, 2> kTop = {"what", "recipes"};
  root.check_keys(kTop);
  const YamlNode list = root.at("recipes");
  if (!list.is_seq() || list.items().empty()) {
    list.fail("expected a list of recipes, and at least one");
  }
  const std::map<std::string, YamlNode> by_id = cases_by_id(cases);
  std::map<std::string, std::string> notes;
  for (const YamlNode& e : list.items()) {
    e.expect_map();
    e.check_keys(kEntryKeys);
    const std::string config = text_of(e.at("config"));
    (void)e.at("source");
    const YamlNode runs = e.at("runs");
    if (!runs.is_seq() || runs.items().empty()) {
      runs.fail("expected the ids of the runs the recipe applies to, and at least one");
    }
    for (const YamlNode& r : runs.items()) {
      const std::string id = text_of(r);
      const auto c = by_id.find(id);
      if (c == by_id.end()) {
        r.fail(fmt::format("no run with id '{}' in the runs file", id));
      }
      if (c->second.has("scenario")) {
        r.fail(fmt::format("run '{}' is given as a scenario file, which takes no recipe", id),
               "set its keys with the run's `set:` list");
      }
      if (notes.contains(id)) {
        r.fail(fmt::format("run '{}' is named by a second recipe", id));
      }
      const std::vector<std::string> taken = merge(e, c->second);
      notes[id] = taken.empty()
                      ? fmt::format("recipe {}: the run states everything it sets", config)
                      : fmt::format("from recipe {}: {}", config, joined(taken));
    }
  }
  return notes;
}

}  // namespace tessera::experiments::runs
