// SPDX-License-Identifier: Apache-2.0
#include "experiments/schedule_spec.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <sstream>

#include "base/error.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::experiments {

namespace {

// The integer after "name:" in `spec`, `fallback` without one.
std::int64_t spec_count(const std::string& spec, std::int64_t fallback) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) {
    return fallback;
  }
  std::int64_t v = 0;
  const char* first = spec.data() + colon + 1;
  const char* last = spec.data() + spec.size();
  auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || end != last || first == last) {
    throw base::InputError(
        fmt::format("--schedules: '{}': expected a whole number after ':'", spec));
  }
  return v;
}

// Mpipe: "transpose[:round_robin|min|greedy][:recompute|owner]".
void parse_transpose(const std::string& spec, synth::ScheduleConfig& cfg) {
  cfg.encoder = synth::EncoderPlacement::kTranspose;
  std::stringstream parts(spec.substr(std::string("transpose").size()));
  for (std::string part; std::getline(parts, part, ':');) {
    if (part.empty()) {
      continue;
    }
    if (part == "round_robin" || part == "min" || part == "greedy") {
      cfg.owners = part == "min"      ? synth::OwnerMode::kMin
                   : part == "greedy" ? synth::OwnerMode::kGreedy
                                      : synth::OwnerMode::kRoundRobin;
    } else if (part == "recompute" || part == "owner") {
      cfg.encoder_backward =
          part == "owner" ? synth::EncoderBackward::kOwner : synth::EncoderBackward::kRecompute;
    } else {
      throw base::InputError(
          fmt::format("--schedules: '{}' in '{}' is neither an owner map (round_robin, min, "
                      "greedy) nor an encoder backward (recompute, owner)",
                      part, spec));
    }
  }
}

// The body schedules that are a bare name.
bool parse_body(const std::string& name, synth::ScheduleConfig& cfg) {
  using K = synth::ScheduleKind;
  static const std::pair<const char*, K> kKinds[] = {
      {"1f1b", K::k1F1B},  {"gpipe", K::kGpipe},         {"zb-h1", K::kZbH1},
      {"zb-h2", K::kZbH2}, {"dualpipev", K::kDualPipeV}, {"dualpipe", K::kDualPipe}};
  for (const auto& [n, k] : kKinds) {
    if (name == n) {
      cfg.kind = k;
      return true;
    }
  }
  return false;
}

}  // namespace

synth::ScheduleConfig parse_schedule(const std::string& spec) {
  synth::ScheduleConfig cfg;
  std::string name = spec.substr(0, spec.find(':'));
  if (parse_body(name, cfg)) {
    return cfg;
  }
  if (name == "transpose") {
    parse_transpose(spec, cfg);
  } else if (name == "encoder-separate") {  // DistTrain-style: the encoder on n devices more
    cfg.encoder = synth::EncoderPlacement::kSeparate;
    cfg.encoder_devices = spec_count(spec, 1);
    if (cfg.encoder_devices < 1) {
      throw base::InputError(
          fmt::format("--schedules: '{}': expected encoder-separate:N with N >= 1", spec));
    }
  } else if (name == "encoder-stages") {  // the encoder as its own first pipeline stage(s)
    cfg.encoder = synth::EncoderPlacement::kStages;
    cfg.encoder_stages = spec_count(spec, 1);
  } else if (name == "interleaved") {
    cfg.kind = synth::ScheduleKind::kInterleaved;
    cfg.chunks = spec_count(spec, 2);
  } else {
    throw base::InputError(
        fmt::format("--schedules: unknown schedule '{}'; expected 1f1b, gpipe, zb-h1, zb-h2, "
                    "dualpipev, dualpipe, interleaved[:chunks], "
                    "transpose[:round_robin|min|greedy][:recompute|owner], encoder-stages[:k] "
                    "or encoder-separate[:devices]",
                    spec));
  }
  return cfg;
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

std::string unsupported(const synth::Scenario& s, const synth::ScheduleConfig& cfg) {
  synth::schedule::Placement place(cfg, static_cast<int>(s.parallel.pp));
  if (cfg.encoder != synth::EncoderPlacement::kInline && !s.encoder.present) {
    return "the scenario has no encoder to place";
  }
  if (s.encoder.present && cfg.kind == synth::ScheduleKind::kDualPipe) {
    return "an encoder region is not supported with DualPipe yet";
  }
  if (cfg.encoder == synth::EncoderPlacement::kStages) {
    bool flat = cfg.kind == synth::ScheduleKind::kGpipe || cfg.kind == synth::ScheduleKind::k1F1B ||
                cfg.kind == synth::ScheduleKind::kZbH1;
    if (!flat || cfg.encoder_stages < 1 || cfg.encoder_stages >= s.parallel.pp ||
        s.encoder.layers < cfg.encoder_stages ||
        s.model.layers < s.parallel.pp - cfg.encoder_stages) {
      return fmt::format("the encoder cannot take {} of {} pipeline stages here",
                         cfg.encoder_stages, s.parallel.pp);
    }
  } else if (s.model.layers % place.stages_per_pipe() != 0) {
    return fmt::format("its {} pipeline stages do not divide {} layers", place.stages_per_pipe(),
                       s.model.layers);
  }
  try {
    synth::schedule::check_schedule(cfg, static_cast<int>(s.parallel.pp),
                                    static_cast<int>(s.microbatches()));
  } catch (const base::InputError& e) {
    return e.message();
  }
  return "";
}

}  // namespace tessera::experiments
