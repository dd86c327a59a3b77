// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/link_spec_yaml.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace tessera::hw {

namespace {

constexpr std::array<std::string_view, 3> kLinkKeys = {"bandwidth", "latency", "efficiency"};

LinkSpec read_required(const base::YamlNode& node) {
  LinkSpec spec;
  spec.bandwidth = node.at("bandwidth").as_quantity(base::Dimension::kBandwidth);
  spec.latency = base::from_seconds(node.at("latency").as_quantity(base::Dimension::kTime, true));
  spec.efficiency = read_fraction(node.at("efficiency"));
  return spec;
}

LinkSpec read_override(const base::YamlNode& node) {
  LinkSpec spec{0.0, 0, 0.0};
  if (auto bw = node.find("bandwidth")) {
    spec.bandwidth = bw->as_quantity(base::Dimension::kBandwidth, true);
  }
  if (auto lat = node.find("latency")) {
    spec.latency = base::from_seconds(lat->as_quantity(base::Dimension::kTime, true));
  }
  if (auto eff = node.find("efficiency")) {
    spec.efficiency = read_fraction(*eff);
  }
  return spec;
}

}  // namespace

double read_fraction(const base::YamlNode& node) {
  double value = node.as_double();
  if (value <= 0.0 || value > 1.0) {
    node.fail(fmt::format("expected a fraction in (0, 1], got {}", node.as_string()));
  }
  return value;
}

LinkSpec read_link_spec(const base::YamlNode& node, LinkFields fields) {
  node.check_keys(kLinkKeys);
  return fields == LinkFields::kRequired ? read_required(node) : read_override(node);
}

}  // namespace tessera::hw
