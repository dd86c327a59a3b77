// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/parameters.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <vector>

namespace tessera::hw {

namespace {

std::vector<Parameter> all() {
  std::vector<Parameter> out;
  for (std::span<const Parameter> part : {compute_parameters(), link_parameters()}) {
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

// A quantity in the unit a profile writes it in, with enough digits to read back the same.
std::string format_quantity(base::Dimension d, double v) {
  switch (d) {
    case base::Dimension::kTime:
      return fmt::format("\"{:.9g} us\"", v * 1e6);
    case base::Dimension::kFlopRate:
      return fmt::format("\"{:.9g} TFLOP/s\"", v / 1e12);
    case base::Dimension::kBandwidth:
      return fmt::format("\"{:.9g} GB/s\"", v / 1e9);
    case base::Dimension::kBytes:
      return fmt::format("\"{:.12g} B\"", v);
    case base::Dimension::kPower:
      return fmt::format("\"{:.9g} W\"", v);
  }
  return fmt::format("{:.9g}", v);
}

}  // namespace

std::span<const Parameter> profile_parameters() {
  static const std::vector<Parameter> kTable = all();
  return kTable;
}

std::span<const ParameterGroup> parameter_groups() {
  static const std::array<ParameterGroup, 4> kGroups = {{
      {"attention.fa2", [](Profile& p) { p.attention_fa2.emplace(p.attention); },
       [](const Profile& p) { return p.attention_fa2.has_value(); }},
      {"collective.ll", [](Profile& p) { p.collective.ll.enabled = true; },
       [](const Profile& p) { return p.collective.ll.enabled; }},
      {"collective.ll128", [](Profile& p) { p.collective.ll128.enabled = true; },
       [](const Profile& p) { return p.collective.ll128.enabled; }},
      {"collective.nvls", [](Profile& p) { p.collective.nvls.enabled = true; },
       [](const Profile& p) { return p.collective.nvls.enabled; }},
  }};
  return kGroups;
}

const Parameter* find_parameter(std::string_view path) {
  for (const Parameter& p : profile_parameters()) {
    if (p.path == path) {
      return &p;
    }
  }
  return nullptr;
}

std::string format_parameter(const Parameter& p, double value) {
  switch (p.kind) {
    case Parameter::Kind::kQuantity:
      return format_quantity(p.unit, value);
    case Parameter::Kind::kInteger:
      return fmt::format("{:.0f}", value);
    case Parameter::Kind::kFlag:
      return value != 0.0 ? "true" : "false";
    default:
      return fmt::format("{:.9g}", value);
  }
}

std::string format_bound(const Parameter& p, double v) {
  if (p.kind != Parameter::Kind::kQuantity) {
    return fmt::format("{}", v);
  }
  switch (p.unit) {
    case base::Dimension::kTime:
      return base::format_seconds(v);
    case base::Dimension::kFlopRate:
      return base::format_rate(v);
    case base::Dimension::kBytes:
      return base::format_bytes(v);
    case base::Dimension::kBandwidth:
      return fmt::format("{:.4g} GB/s", v / 1e9);
    case base::Dimension::kPower:
      return fmt::format("{:.4g} W", v);
  }
  return fmt::format("{}", v);
}

std::string format_bounds(const Parameter& p) {
  switch (p.kind) {
    case Parameter::Kind::kCustom:
    case Parameter::Kind::kFlag:
      return "";
    case Parameter::Kind::kFraction:
      return "(0, 1]";
    default:
      return std::isinf(p.hi)
                 ? fmt::format(">= {}", format_bound(p, p.lo))
                 : fmt::format("[{}, {}]", format_bound(p, p.lo), format_bound(p, p.hi));
  }
}

std::string format_parameter(const Parameter& p, const Profile& profile) {
  return p.kind == Parameter::Kind::kCustom ? p.write(profile)
                                            : format_parameter(p, p.get(profile));
}

}  // namespace tessera::hw
