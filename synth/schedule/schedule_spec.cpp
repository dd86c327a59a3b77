// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/schedule_spec.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "base/error.h"
#include "base/yaml_reader.h"
#include "synth/schedule/encoder_placements.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::schedule {

namespace {

// The spec's head and its ':'-separated parameters.
struct Parts {
  std::string head;
  std::vector<std::string> params;
};

Parts split(std::string_view text) {
  Parts p;
  std::size_t colon = text.find(':');
  p.head = std::string(text.substr(0, colon));
  while (colon != std::string_view::npos) {
    std::size_t next = text.find(':', colon + 1);
    p.params.emplace_back(
        text.substr(colon + 1, next == std::string_view::npos ? next : next - colon - 1));
    colon = next;
  }
  return p;
}

// The whole number of the spec's only parameter, `fallback` without one.
std::int64_t count_param(std::string_view text, const Parts& p, std::int64_t fallback,
                         std::int64_t min, std::string_view what) {
  if (p.params.size() > 1) {
    throw base::InputError(fmt::format("'{}': {} takes one parameter ({}), got {}", text, p.head,
                                       what, p.params.size()));
  }
  if (p.params.empty()) {
    return fallback;
  }
  const std::string& s = p.params.front();
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty() || v < min || v > (1 << 20)) {
    throw base::InputError(fmt::format(
        "'{}': expected {} after ':', a whole number >= {}, got '{}'", text, what, min, s));
  }
  return v;
}

void read_transpose_params(std::string_view text, const Parts& p, ScheduleSpec& spec) {
  for (const std::string& part : p.params) {
    if (part.empty()) {
      continue;
    }
    if (part == "round_robin" || part == "min" || part == "greedy") {
      spec.owners = part == "min"      ? OwnerMode::kMin
                    : part == "greedy" ? OwnerMode::kGreedy
                                       : OwnerMode::kRoundRobin;
    } else if (part == "recompute" || part == "owner") {
      spec.encoder_backward =
          part == "owner" ? EncoderBackward::kOwner : EncoderBackward::kRecompute;
    } else {
      throw base::InputError(
          fmt::format("'{}': '{}' is neither an owner map (round_robin, min, greedy) nor an "
                      "encoder backward (recompute, owner)",
                      text, part));
    }
  }
}

[[noreturn]] void unknown(std::string_view text, const std::string& head) {
  auto skeletons = builtin_schedules().names();
  std::vector<std::string_view> names(skeletons.begin(), skeletons.end());
  for (const auto& e : builtin_encoder_placements().entries()) {
    if (!e.spec_head.empty()) {
      names.push_back(e.spec_head);
    }
  }
  std::string guess = base::nearest(head, names);
  throw base::InputError(fmt::format("unknown schedule '{}'; {}(expected one of: {})", text,
                                     guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess),
                                     schedule_spec_forms()));
}

// An encoder placement's spec (with a 1F1B body): its parameters.
void read_placement(std::string_view text, const Parts& p, const EncoderPlacementEntry& e,
                    ScheduleSpec& spec) {
  spec.encoder = e.placement;
  switch (e.placement) {
    case EncoderPlacement::kTranspose:
      return read_transpose_params(text, p, spec);
    case EncoderPlacement::kStages:
      spec.encoder_stages = count_param(text, p, 1, 1, "the encoder's pipeline stages");
      return;
    case EncoderPlacement::kSeparate:
      spec.encoder_devices = count_param(text, p, 1, 1, "the encoder's devices");
      return;
    case EncoderPlacement::kInline:
      return;
  }
}

// A skeleton's spec: interleaved takes its chunks, the others nothing.
void read_skeleton(std::string_view text, const Parts& p, const PipelineSchedule& s,
                   ScheduleSpec& spec) {
  spec.kind = s.kind();
  if (s.takes_chunks()) {
    spec.chunks = count_param(text, p, 2, 2, "the model chunks per rank");
  } else if (!p.params.empty()) {
    throw base::InputError(
        fmt::format("'{}': the {} schedule takes no ':' parameter", text, p.head));
  }
}

}  // namespace

ScheduleSpec parse_schedule_spec(std::string_view text) {
  Parts p = split(text);
  ScheduleSpec spec;
  if (const auto* placement = builtin_encoder_placements().find_spec(p.head)) {
    read_placement(text, p, *placement, spec);
  } else if (const auto* skeleton = builtin_schedules().find(p.head)) {
    read_skeleton(text, p, *skeleton, spec);
  } else {
    unknown(text, p.head);
  }
  return spec;
}

std::string schedule_spec_forms() {
  std::string out;
  for (std::string_view name : builtin_schedules().names()) {
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", name,
                       builtin_schedules().find(name)->takes_chunks() ? "[:chunks]" : "");
  }
  for (const auto& e : builtin_encoder_placements().entries()) {
    if (!e.spec_form.empty()) {
      out += fmt::format(", {}", e.spec_form);
    }
  }
  return out;
}

}  // namespace tessera::synth::schedule
