// SPDX-License-Identifier: Apache-2.0
// YAML document -> hw::Profile, driven by the parameter table (parameters.h): every key the
// table does not name is an error with the nearest valid one, every required key must be
// given unless the profile `extends:` another (whose values it then changes), every number
// needs its unit and its bounds, and every rejected value is reported at its file:line:col.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <vector>

#include "base/yaml_reader.h"
#include "hwprofiles/attention_model.h"
#include "hwprofiles/hw_profile.h"
#include "hwprofiles/link_spec_yaml.h"
#include "hwprofiles/parameters.h"

namespace tessera::hw {

namespace {

using base::YamlNode;
using Kind = Parameter::Kind;

constexpr int kMaxExtends = 8;  // a chain of profiles extending each other

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string_view::npos) {
      return parts;
    }
    start = dot + 1;
  }
}

// The node at the path `parts` below `n`, when the document gives it.
std::optional<YamlNode> node_at(const YamlNode& n, std::span<const std::string_view> parts) {
  if (parts.empty()) {
    return n;
  }
  if (!n.is_map() || !n.has(parts.front())) {
    return std::nullopt;
  }
  return node_at(n.at(parts.front()), parts.subspan(1));
}

std::optional<YamlNode> node_at(const YamlNode& root, std::string_view path) {
  const std::vector<std::string_view> parts = split(path);
  return node_at(root, std::span<const std::string_view>(parts));
}

// The keys the table allows directly below `prefix` ("" for the top), in table order.
std::vector<std::string_view> children(std::string_view prefix) {
  std::vector<std::string_view> out;
  if (prefix.empty()) {
    out = {"name", "extends"};
  }
  for (const Parameter& p : profile_parameters()) {
    if (!prefix.empty() && !(p.path.starts_with(prefix) && p.path.size() > prefix.size() &&
                             p.path[prefix.size()] == '.')) {
      continue;
    }
    std::string_view rest = prefix.empty() ? p.path : p.path.substr(prefix.size() + 1);
    std::string_view key = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), key) == out.end()) {
      out.push_back(key);
    }
  }
  return out;
}

// Unknown keys anywhere in the document, against the table's paths.
void check_keys(const YamlNode& node, const std::string& prefix) {
  const std::vector<std::string_view> allowed = children(prefix);
  node.check_keys(allowed);
  for (const std::string& key : node.keys()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (find_parameter(path) == nullptr && node.at(key).is_map()) {
      check_keys(node.at(key), path);
    }
  }
}

void read_value(const Parameter& p, const YamlNode& n, Profile& out) {
  double v = 0.0;
  switch (p.kind) {
    case Kind::kCustom:
      p.read(n, out);
      return;
    case Kind::kQuantity:
      v = n.as_quantity(p.unit, p.lo <= 0.0);
      if (v < p.lo || v > p.hi) {
        n.fail(std::isinf(p.hi)
                   ? fmt::format("expected {} of at least {}", base::dimension_name(p.unit),
                                 format_bound(p, p.lo))
                   : fmt::format("expected {} in [{}, {}]", base::dimension_name(p.unit),
                                 format_bound(p, p.lo), format_bound(p, p.hi)));
      }
      break;
    case Kind::kFraction:
      v = read_fraction(n);
      break;
    case Kind::kNumber:
      v = n.as_double();
      if (!(v >= p.lo && v <= p.hi)) {
        n.fail(fmt::format("expected a number in [{}, {}]", p.lo, p.hi));
      }
      break;
    case Kind::kInteger:
      v = static_cast<double>(
          n.as_int(static_cast<std::int64_t>(p.lo), static_cast<std::int64_t>(p.hi)));
      break;
    case Kind::kFlag:
      v = n.as_bool() ? 1.0 : 0.0;
      break;
  }
  p.set(out, v);
}

// The node for a missing required key's error: its nearest parent the document gives; at()
// there names the first missing key.
[[noreturn]] void fail_missing(const YamlNode& root, std::string_view path) {
  YamlNode cur = root;
  for (std::string_view part : split(path)) {
    cur = cur.at(part);
  }
  cur.fail("internal: a missing key was found");  // not reached: at() threw
}

void check_name(const YamlNode& root, const std::string& name) {
  auto given = root.find("name");
  if (given && given->as_string() != name) {
    given->fail(fmt::format("profile name '{}' does not match the file name '{}.yaml'",
                            given->as_string(), name),
                "a profile is named after its file; rename one of them");
  }
}

// Cross-key rules: reserved memory below capacity; fp8_transpose goes with an FP8 peak.
void check_profile(const YamlNode& root, const Profile& p, bool extending) {
  if (p.reserved_memory >= p.hbm_capacity) {
    YamlNode at = node_at(root, "hbm.reserved").value_or(root);
    at.fail(fmt::format("reserved memory ({}) must be below the capacity ({})",
                        base::format_bytes(p.reserved_memory), base::format_bytes(p.hbm_capacity)));
  }
  auto given = root.find("fp8_transpose");
  const bool has_fp8 = p.peak(DType::kFP8) > 0.0;
  if (has_fp8 && !given && !extending) {
    root.at("peak").at("fp8").fail(
        "a part with an fp8 peak needs the key 'fp8_transpose' (true: FP8 GEMMs read both "
        "operands K-major only, as on Hopper; false: either layout, as on Blackwell)");
  }
  if (given && !has_fp8) {
    given->fail("this describes FP8 GEMMs, but the part has no peak.fp8");
  }
}

Profile read_profile(const YamlNode& root, const std::string& name, int depth);

// The profile `extends:` names: a shipped name, or a path beside this file.
Profile base_profile(const YamlNode& e, int depth) {
  if (depth >= kMaxExtends) {
    e.fail(fmt::format("profiles extend each other more than {} deep (a cycle?)", kMaxExtends));
  }
  const std::string text = e.as_string();
  std::string file = profile_file(text, e.loc());
  if (file == text && std::filesystem::path(text).is_relative()) {
    const std::string beside = e.find_beside(text);
    if (beside.empty()) {
      e.fail(fmt::format("profile file '{}' does not exist", text),
             "a relative path is looked up beside the profile that extends it");
    }
    file = beside;
  }
  return read_profile(YamlNode::load_file(file), std::filesystem::path(file).stem().string(),
                      depth + 1);
}

Profile read_profile(const YamlNode& root, const std::string& name, int depth) {
  check_keys(root, "");
  check_name(root, name);
  const std::optional<YamlNode> extends = root.find("extends");
  Profile p = extends ? base_profile(*extends, depth) : Profile{};
  if (extends) {
    p.ancestors.insert(p.ancestors.begin(), p.name);
  }
  p.name = name;
  std::set<std::string_view> given_groups;
  for (const ParameterGroup& g : parameter_groups()) {
    if (node_at(root, g.path) && !(extends && g.enabled(p))) {
      given_groups.insert(g.path);  // its keys are required
    }
    if (node_at(root, g.path) && !g.enabled(p)) {
      g.enable(p);
    }
  }
  for (const Parameter& param : profile_parameters()) {
    if (auto n = node_at(root, param.path)) {
      read_value(param, *n, p);
    } else if (param.required &&
               (param.group.empty() ? !extends : given_groups.contains(param.group))) {
      fail_missing(root, param.path);
    }
  }
  check_profile(root, p, extends.has_value());
  p.attention_fraction = attention_fraction_fwd_bwd(p.attention);
  return p;
}

}  // namespace

Profile profile_from_yaml(const YamlNode& root, const std::string& name) {
  return read_profile(root, name, 0);
}

}  // namespace tessera::hw
