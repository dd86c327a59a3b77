// SPDX-License-Identifier: Apache-2.0
// `cluster:`: the hardware profile (a name, a path beside the scenario, or a whole profile a
// --set expanded), the topology and the device count.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "hwprofiles/hw_profile.h"
#include "synth/scenario/readers.h"

namespace tessera::synth::reader {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 4> kClusterKeys = {"hardware", "topology", "devices",
                                                          "power_limit"};

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

// A shipped name or a path; or a mapping: a whole profile, which is what a `--set` below a
// profile name expands it into.
void read_hardware(const YamlNode& hw, ClusterConfig& c) {
  c.hardware_at = hw.loc();
  if (!hw.is_map()) {
    std::string file = hardware_file(hw);
    c.hardware = looks_like_path(hw.as_string()) ? file : hw.as_string();
    c.profile = hw::load_profile(file, hw.loc());
    return;
  }
  std::string name = hw.has("name") ? hw.at("name").as_string() : "inline";
  c.hardware = hw.file();
  c.profile = hw::profile_from_yaml(hw, name);
  auto changes = hw.overrides_below();
  if (!changes.empty()) {
    c.profile->name = fmt::format("{} (modified: {})", name, fmt::join(changes, ", "));
  }
}

void read_topology(const YamlNode& cluster, ClusterConfig& c) {
  const YamlNode topo = cluster.at("topology");
  c.topology = topology::parse_topology(topo);
  if (topo.is_map() && topo.file() != cluster.file()) {  // a preset or file a --set expanded
    c.topology.where = cluster.key_loc("topology");
    c.topology.source =
        fmt::format("{} (modified: {})", std::filesystem::path(topo.file()).stem().string(),
                    fmt::join(topo.overrides_below(), ", "));
  }
}

// A power cap between the part's idle draw and its TDP; the profile's clocks follow it.
void read_power_limit(const YamlNode& cap, ClusterConfig& c) {
  c.power_limit = cap.as_quantity(base::Dimension::kPower);
  const hw::PowerModel& p = c.profile->power;
  if (p.tdp <= 0.0) {
    cap.fail(fmt::format("profile '{}' gives no power.tdp, so a power limit means nothing to it",
                         c.profile->name),
             "give the profile power.tdp and power.idle");
  }
  if (c.power_limit <= p.idle || c.power_limit > p.tdp) {
    cap.fail(
        fmt::format("expected a power limit above the part's idle draw ({:.0f} W) and at most "
                    "its TDP ({:.0f} W)",
                    p.idle, p.tdp));
  }
  c.profile->power.limit = c.power_limit;
}

}  // namespace

// The profile file a `hardware:` scalar names: a shipped profile, or a path relative to the
// scenario's folder (or, for older scenarios, to the working directory).
std::string hardware_file(const YamlNode& hw) {
  std::string text = hw.as_string();
  if (looks_like_path(text)) {
    std::string found = hw.find_beside(text);
    if (found.empty()) {
      hw.fail(fmt::format("hardware profile file '{}' does not exist", text),
              fmt::format("a relative path is looked up beside the scenario ('{}')",
                          (std::filesystem::path(hw.file()).parent_path() / text).string()));
    }
    return found;
  }
  auto names = hw::profile_names();
  if (std::find(names.begin(), names.end(), text) == names.end()) {
    std::vector<std::string_view> views(names.begin(), names.end());
    std::string guess = base::nearest(text, views);
    std::string list;
    for (const auto& s : names) {
      list += (list.empty() ? "" : ", ") + s;
    }
    hw.fail(fmt::format("unknown hardware profile '{}'", text),
            guess.empty() ? "profiles: " + list
                          : fmt::format("did you mean '{}'? (profiles: {})", guess, list));
  }
  return hw::profile_file(text, hw.loc());
}

void read_cluster(const YamlNode& n, ClusterConfig& c) {
  n.check_keys(kClusterKeys);
  read_hardware(n.at("hardware"), c);
  read_topology(n, c);
  YamlNode dev = n.at("devices");
  c.devices = dev.as_int(1, kMaxDevices);
  c.devices_at = dev.loc();
  if (auto cap = n.find("power_limit")) {
    read_power_limit(*cap, c);
  }
}

}  // namespace tessera::synth::reader
