// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/collective_yaml.h"

#include <array>
#include <string_view>

#include "hwprofiles/link_spec_yaml.h"

namespace tessera::hw {

namespace {

using base::Dimension;
using base::YamlNode;

constexpr std::array<std::string_view, 6> kKeys = {"launch", "step",     "ll",
                                                   "ll128",  "channels", "nvls"};
constexpr std::array<std::string_view, 3> kProtocolKeys = {"launch", "step", "bandwidth"};
constexpr std::array<std::string_view, 4> kNvlsKeys = {"latency", "efficiency", "channels",
                                                       "min_members"};
constexpr std::int64_t kMaxChannels = 1024;

base::SimTime read_time(const YamlNode& node) {
  return base::from_seconds(node.as_quantity(Dimension::kTime, true));
}

ProtocolSpec read_protocol(const YamlNode& node) {
  node.check_keys(kProtocolKeys);
  ProtocolSpec s;
  s.enabled = true;
  s.launch = read_time(node.at("launch"));
  s.step = read_time(node.at("step"));
  s.bandwidth = read_fraction(node.at("bandwidth"));
  return s;
}

SwitchReduction read_nvls(const YamlNode& node) {
  node.check_keys(kNvlsKeys);
  SwitchReduction s;
  s.enabled = true;
  s.latency = read_time(node.at("latency"));
  s.efficiency = read_fraction(node.at("efficiency"));
  s.channels = static_cast<int>(node.at("channels").as_int(1, kMaxChannels));
  s.min_members = static_cast<int>(node.at("min_members").as_int(2, kMaxChannels));
  return s;
}

}  // namespace

void read_collective_section(const YamlNode& node, Profile& p) {
  node.check_keys(kKeys);
  p.collective_launch = read_time(node.at("launch"));
  p.collective_step = read_time(node.at("step"));
  CollectiveTuning& t = p.collective;
  if (auto ll = node.find("ll")) {
    t.ll = read_protocol(*ll);
  }
  if (auto ll128 = node.find("ll128")) {
    t.ll128 = read_protocol(*ll128);
  }
  if (auto channels = node.find("channels")) {
    t.channels = static_cast<int>(channels->as_int(0, kMaxChannels));
  }
  if (auto nvls = node.find("nvls")) {
    t.nvls = read_nvls(*nvls);
  }
}

}  // namespace tessera::hw
