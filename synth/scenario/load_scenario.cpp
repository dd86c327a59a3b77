// SPDX-License-Identifier: Apache-2.0
// Strict scenario loading: --set overrides applied to the document, every section read by its
// reader (readers.h), then validate() (validate.h) with each violation reported at the
// file:line:col of its key, or of the nearest parent the file writes.
#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <map>

#include "base/yaml_reader.h"
#include "synth/scenario/readers.h"
#include "synth/scenario/scenario.h"
#include "synth/scenario/validate.h"

namespace tessera::synth {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 9> kTopKeys = {"name",     "description", "model",
                                                      "training", "parallelism", "schedule",
                                                      "cluster",  "encoder",     "data"};

// A preset or schedule name stays when a key below it is set: `--set model.layers=8`; a
// hardware profile or topology preset is replaced by its file's mapping, which the --set then
// changes: `--set cluster.topology.oversubscription=4`.
std::map<std::string, YamlNode::ScalarExpander> expanders() {
  auto expand_file = [](std::string (*file_of)(const YamlNode&)) {
    return [file_of](const YamlNode& scalar) {
      std::string file = file_of(scalar);
      return YamlNode::Expansion{YamlNode::load_file(file).raw(), file};
    };
  };
  return {{"model", YamlNode::keep_under("preset")},
          {"encoder", YamlNode::keep_under("preset")},
          {"schedule", YamlNode::keep_under("kind")},
          {"cluster.hardware", expand_file(&reader::hardware_file)},
          {"cluster.topology", expand_file(&topology::topology_file)}};
}

// The node key path `key` ("schedule.regions[0].stages") names; `exact` says whether the
// whole path is written, else the node is its nearest written parent.
YamlNode locate(const YamlNode& root, std::string_view key, bool& exact) {
  YamlNode cur = root;
  exact = false;
  std::size_t start = 0;
  while (start <= key.size()) {
    std::size_t dot = key.find('.', start);
    std::string_view part = key.substr(start, dot == std::string_view::npos ? dot : dot - start);
    std::size_t bracket = part.find('[');
    std::string name(part.substr(0, bracket));
    if (!cur.is_map() || !cur.has(name)) {
      return cur;
    }
    cur = cur.at(name);
    if (bracket != std::string_view::npos) {
      auto index = static_cast<std::size_t>(std::stoul(std::string(part.substr(bracket + 1))));
      if (!cur.is_seq() || index >= cur.items().size()) {
        return cur;
      }
      cur = cur.items()[index];
    }
    if (dot == std::string_view::npos) {
      exact = true;
      return cur;
    }
    start = dot + 1;
  }
  return cur;
}

[[noreturn]] void fail_at(const YamlNode& root, const Violation& v) {
  bool exact = false;
  YamlNode at = locate(root, v.key, exact);
  if (!exact && !v.alt_key.empty()) {
    bool alt_exact = false;
    YamlNode alt = locate(root, v.alt_key, alt_exact);
    if (alt_exact) {
      at = alt;
    }
  }
  at.fail(v.message, v.hint);
}

Scenario read_scenario(const YamlNode& root, const std::string& path) {
  root.check_keys(kTopKeys);
  Scenario s;
  s.file = path;
  s.name =
      root.has("name") ? root.at("name").as_string() : std::filesystem::path(path).stem().string();
  reader::read_model(root.at("model"), s.model);
  reader::read_training(root.at("training"), s.training);
  reader::read_parallel(root.at("parallelism"), s.parallel);
  s.schedule = reader::read_schedule(root.at("schedule"));
  reader::read_cluster(root.at("cluster"), s.cluster);
  if (auto e = root.find("encoder")) {
    reader::read_encoder(*e, s.encoder);
  }
  if (auto d = root.find("data")) {
    reader::read_data(*d, s.data);
  }
  return s;
}

Scenario load_scenario_root(YamlNode root, const std::string& path,
                            const std::vector<std::string>& overrides) {
  const auto expand = expanders();
  for (const auto& o : overrides) {
    root.apply_override(o, expand);
  }
  Scenario s = read_scenario(root, path);
  if (s.parallel.dp == 0) {  // absent or `auto`: whatever the devices leave
    s.parallel.dp = devices_left_dp(s);
  }
  auto violations = validate(s);
  if (!violations.empty()) {
    fail_at(root, violations.front());
  }
  if (root.has("data") && !s.encoder.present) {
    root.at("data").fail("a data mix needs an encoder: the scenario has no 'encoder:' block");
  }
  return s;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return load_scenario_root(YamlNode::load_file(path), path, overrides);
}

Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const std::vector<std::string>& overrides) {
  return load_scenario_root(YamlNode::load_string(text, name), name, overrides);
}

}  // namespace tessera::synth
