// SPDX-License-Identifier: Apache-2.0
// YAML -> TopologySpec: an inline mapping (strict keys), a preset name resolved from
// topology/presets/<name>.yaml, or a path to a topology file (relative to the referring
// file's folder). Every rejected value is reported at its file:line:col.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "base/data_dir.h"
#include "hwprofiles/link_spec_yaml.h"
#include "topology/builders/builder.h"
#include "topology/cluster.h"

namespace tessera::topology {

namespace {

namespace fs = std::filesystem;
using base::YamlNode;

constexpr std::array<std::string_view, 13> kKeys = {
    "kind",           "description",      "devices_per_node", "nodes_per_leaf",
    "rail_optimized", "oversubscription", "spines",           "supernode_size",
    "max_nodes",      "allocation_unit",  "scale_up",         "scale_out",
    "fabric"};

std::string presets_dir() {
  return base::data_dir("topology/presets", TESSERA_TOPOLOGY_PRESETS_DIR);
}

void read_int(const YamlNode& node, std::string_view key, std::int64_t min, int& out) {
  if (auto value = node.find(key)) {
    out = static_cast<int>(value->as_int(min, 1 << 20));
  }
}

void read_oversubscription(const YamlNode& node, TopologySpec& spec) {
  if (auto value = node.find("oversubscription")) {
    spec.oversubscription = value->as_double();
    if (spec.oversubscription < 1.0) {
      value->fail(fmt::format("expected a number >= 1, got {}", value->as_string()));
    }
  }
}

void check_kind_keys(const YamlNode& node, const TopologySpec& spec) {
  auto size = node.find("supernode_size");
  if (size && spec.kind != "ub_supernode") {
    size->fail(fmt::format("only kind 'ub_supernode' takes this key, not '{}'", spec.kind));
  }
}

void read_links(const YamlNode& node, TopologySpec& spec) {
  using hw::LinkFields;
  if (auto up = node.find("scale_up")) {
    spec.scale_up = hw::read_link_spec(*up, LinkFields::kOverride);
  }
  if (auto out = node.find("scale_out")) {
    spec.scale_out = hw::read_link_spec(*out, LinkFields::kOverride);
  }
  if (auto fabric = node.find("fabric")) {
    spec.fabric = hw::read_link_spec(*fabric, LinkFields::kOverride);
  }
}

TopologySpec parse_mapping(const YamlNode& node, std::string source, base::SourceLoc where) {
  node.check_keys(kKeys);
  TopologySpec spec;
  spec.source = std::move(source);
  spec.where = std::move(where);
  spec.kind = node.at("kind").as_choice(builtin_builders().kinds());
  if (auto text = node.find("description")) {
    spec.description = text->as_string();
  }
  read_int(node, "devices_per_node", 1, spec.devices_per_node);
  read_int(node, "nodes_per_leaf", 1, spec.nodes_per_leaf);
  read_int(node, "spines", 1, spec.spines);
  read_int(node, "supernode_size", 1, spec.supernode_size);
  read_int(node, "max_nodes", 1, spec.max_nodes);
  read_int(node, "allocation_unit", 1, spec.allocation_unit);
  if (auto rail = node.find("rail_optimized")) {
    spec.rail_optimized = rail->as_bool();
  }
  read_oversubscription(node, spec);
  check_kind_keys(node, spec);
  read_links(node, spec);
  return spec;
}

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

std::string unknown_preset_hint(const std::string& name) {
  std::vector<std::string> names = preset_names();
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string list = fmt::format("{}", fmt::join(names, ", "));
  std::string guess = base::nearest(name, views);
  return guess.empty() ? fmt::format("available presets: {}", list)
                       : fmt::format("did you mean '{}'? (available presets: {})", guess, list);
}

}  // namespace

std::vector<std::string> preset_names() {
  return base::yaml_stems(presets_dir(), "topology preset");
}

std::string preset_file(const std::string& name, const base::SourceLoc& where) {
  fs::path path = fs::path(presets_dir()) / (name + ".yaml");
  std::error_code ec;  // a name too long for a path is unknown too, not an exception
  if (name.find('/') != std::string::npos || !fs::is_regular_file(path, ec)) {
    throw base::InputError(where, fmt::format("unknown topology preset '{}'", name),
                           unknown_preset_hint(name));
  }
  return path.string();
}

std::string topology_file(const YamlNode& ref) {
  std::string text = ref.as_string();
  if (!looks_like_path(text)) {
    return preset_file(text, ref.loc());
  }
  std::string found = ref.find_beside(text);
  if (found.empty()) {
    ref.fail(fmt::format("topology file '{}' does not exist", text),
             fmt::format("a relative path is looked up beside the scenario ('{}')",
                         (fs::path(ref.file()).parent_path() / text).string()));
  }
  return found;
}

TopologySpec load_topology_preset(const std::string& name, const base::SourceLoc& where) {
  YamlNode root = YamlNode::load_file(preset_file(name, where));
  // Errors found later (device counts) point at the reference when there is one.
  return parse_mapping(root, name, where.file.empty() ? root.loc() : where);
}

TopologySpec parse_topology(const YamlNode& node) {
  if (node.is_scalar() && looks_like_path(node.as_string())) {
    YamlNode root = YamlNode::load_file(topology_file(node));
    return parse_mapping(root, node.as_string(), node.loc());
  }
  if (node.is_scalar()) {
    return load_topology_preset(node.as_string(), node.loc());
  }
  return parse_mapping(node, node.file(), node.loc());
}

}  // namespace tessera::topology
