// SPDX-License-Identifier: Apache-2.0
// `tessera list`: what the registries hold (profiles, topologies, models, schedules, placements,
// collective algorithms, modelled effects, search axes) and, with --parameters, the hardware
// profile parameter table.
#include <fmt/format.h>

#include "cli/commands.h"
#include "experiments/search/space.h"
#include "hwprofiles/hw_profile.h"
#include "hwprofiles/parameters.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/effects.h"
#include "synth/scenario/model_presets.h"
#include "topology/cluster.h"

namespace tessera::cli {

namespace {

std::string_view kind_name(const hw::Parameter& p) {
  using K = hw::Parameter::Kind;
  switch (p.kind) {
    case K::kQuantity:
      return base::dimension_name(p.unit);
    case K::kFraction:
      return "a fraction";
    case K::kNumber:
      return "a number";
    case K::kInteger:
      return "an integer";
    case K::kFlag:
      return "true or false";
    case K::kCustom:
      return "see meaning";
  }
  return "";
}

// The profile parameter table as markdown (docs/profile_parameters.md is this output).
int list_parameters() {
  fmt::print("| key | value | bounds | required | fitted to runs | meaning | source |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const hw::Parameter& p : hw::profile_parameters()) {
    const std::string group = p.group.empty() ? "" : fmt::format(" (in {})", p.group);
    fmt::print("| `{}` | {} | {} | {}{} | {} | {} | {} |\n", p.path, kind_name(p),
               hw::format_bounds(p), p.required ? "yes" : "no", group, p.fitted ? "yes" : "", p.doc,
               p.source);
  }
  return 0;
}

}  // namespace

int list(bool parameters) {
  if (parameters) {
    return list_parameters();
  }
  fmt::print("hardware profiles:");
  for (const auto& n : hw::profile_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\ntopology presets:");
  for (const auto& n : topology::preset_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nmodel presets:");
  for (auto n : synth::model_preset_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nencoder presets:");
  for (auto n : synth::encoder_preset_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nschedules:");
  for (auto n : synth::schedule_names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nencoder placements:");
  for (auto n : synth::encoder_placement_names()) {
    fmt::print(" {}", n);
  }
  fmt::print(
      "\ncollective algorithms (the tuner's candidates, and deepep, which the deepep "
      "dispatcher's all-to-alls run; docs/collectives.md):");
  for (auto n : models::builtin_collectives().names()) {
    fmt::print(" {}", n);
  }
  fmt::print("\nmodelled effects (run --without NAME):\n");
  for (const models::EffectInfo& e : models::known_effects()) {
    fmt::print("  {:<20} {}\n", e.name, e.what);
  }
  fmt::print(
      "hardware profile keys fitted to measured runs (tessera list --parameters: all {};"
      " docs/profile_parameters.md):",
      hw::profile_parameters().size());
  for (const hw::Parameter& p : hw::profile_parameters()) {
    if (p.fitted) {
      fmt::print(" {}", p.path);
    }
  }
  fmt::print("\nsearch axes (search --vary AXIS=v1,v2,...; docs/search.md):\n");
  for (const experiments::search::Axis& a : experiments::search::axes()) {
    fmt::print("  {:<20} {}\n", a.name, a.help);
  }
  return 0;
}

}  // namespace tessera::cli
