// SPDX-License-Identifier: Apache-2.0
#include "experiments/runs/pairs.h"

#include <yaml-cpp/yaml.h>

#include <map>

namespace tessera::experiments::runs {

namespace {

using Keys = std::map<std::string, std::string>;

// The scalars of a scenario document by dotted path; a sequence as its flow text.
void flatten(const YAML::Node& n, const std::string& path, Keys& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      flatten(kv.second, path.empty() ? key : path + "." + key, out);
    }
    return;
  }
  if (n.IsScalar()) {
    out[path] = n.as<std::string>();
    return;
  }
  YAML::Emitter e;
  e << YAML::Flow << n;
  out[path] = e.c_str();
}

// The scenario's keys: the YAML form's whole scenario, the name aside; or the scenario file a
// run names (key "scenario") and its overrides, a later one of a key winning, as in --set.
Keys keys_of(const Run& run) {
  Keys k;
  if (!run.scenario_text.empty()) {
    flatten(YAML::Load(run.scenario_text), "", k);
    k.erase("name");
    return k;
  }
  k["scenario"] = run.scenario_file;
  for (const std::string& s : run.sets) {
    const auto eq = s.find('=');
    k[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
  }
  return k;
}

// The keys whose values differ, stopping once there are more than `most`.
std::vector<Difference> differences(const Keys& a, const Keys& b, int most) {
  std::vector<Difference> d;
  auto note = [&](const std::string& key, const std::string& x, const std::string& y) {
    if (x != y) {
      d.push_back({key, x, y});
    }
  };
  auto i = a.begin();
  auto j = b.begin();
  while ((i != a.end() || j != b.end()) && static_cast<int>(d.size()) <= most) {
    if (j == b.end() || (i != a.end() && i->first < j->first)) {
      note(i->first, i->second, "");
      ++i;
    } else if (i == a.end() || j->first < i->first) {
      note(j->first, "", j->second);
      ++j;
    } else {
      note(i->first, i->second, j->second);
      ++i;
      ++j;
    }
  }
  return d;
}

}  // namespace

std::vector<RunPair> run_pairs(const std::vector<RunResult>& results, int most) {
  std::vector<std::pair<const RunResult*, Keys>> runs;
  for (const RunResult& r : results) {
    if (r.simulated) {
      runs.emplace_back(&r, keys_of(*r.run));
    }
  }
  std::vector<RunPair> pairs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t j = i + 1; j < runs.size(); ++j) {
      std::vector<Difference> d = differences(runs[i].second, runs[j].second, most);
      if (static_cast<int>(d.size()) <= most) {
        pairs.push_back({runs[i].first, runs[j].first, std::move(d)});
      }
    }
  }
  return pairs;
}

}  // namespace tessera::experiments::runs
