// SPDX-License-Identifier: Apache-2.0
#include "experiments/schedule_spec.h"

#include <fmt/format.h>

#include <sstream>

#include "base/error.h"
#include "synth/scenario/validate.h"
#include "synth/schedule/schedule_spec.h"

namespace tessera::experiments {

synth::ScheduleConfig parse_schedule(const std::string& spec) {
  try {
    return synth::schedule::parse_schedule_spec(spec);
  } catch (const base::InputError& e) {
    throw base::InputError(fmt::format("--schedules: {}", e.message()));
  }
}

std::vector<std::string> split_schedules(const std::string& list) {
  std::vector<std::string> specs;
  std::stringstream ss(list);
  for (std::string spec; std::getline(ss, spec, ',');) {
    specs.push_back(spec);
  }
  if (specs.empty()) {
    throw base::InputError("--schedules: give at least one schedule");
  }
  return specs;
}

// The scenario's own validation (synth/scenario/validate.h) under `cfg`: its first violation
// is the reason.
std::string unsupported(const synth::Scenario& s, const synth::ScheduleConfig& cfg) {
  if (cfg.encoder != synth::EncoderPlacement::kInline && !s.encoder.present) {
    return "the scenario has no encoder to place";
  }
  synth::Scenario under = s;
  under.schedule = cfg;
  const std::vector<synth::Violation> v = synth::validate(under);
  return v.empty() ? "" : v.front().message;
}

}  // namespace tessera::experiments
