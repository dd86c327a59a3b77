// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/schedule_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

#include "base/error.h"
#include "base/yaml_reader.h"

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

constexpr std::array<std::string_view, 3> kEncoderForms = {"transpose", "encoder-stages",
                                                           "encoder-separate"};

[[noreturn]] void unknown(std::string_view text, const std::string& head) {
  std::vector<std::string_view> names(schedule_names().begin(), schedule_names().end());
  names.insert(names.end(), kEncoderForms.begin(), kEncoderForms.end());
  std::string guess = base::nearest(head, names);
  throw base::InputError(fmt::format("unknown schedule '{}'; {}(expected one of: {})", text,
                                     guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess),
                                     schedule_spec_forms()));
}

}  // namespace

ScheduleSpec parse_schedule_spec(std::string_view text) {
  Parts p = split(text);
  ScheduleSpec spec;
  if (p.head == "transpose") {
    spec.encoder = EncoderPlacement::kTranspose;
    read_transpose_params(text, p, spec);
  } else if (p.head == "encoder-stages") {
    spec.encoder = EncoderPlacement::kStages;
    spec.encoder_stages = count_param(text, p, 1, 1, "the encoder's pipeline stages");
  } else if (p.head == "encoder-separate") {
    spec.encoder = EncoderPlacement::kSeparate;
    spec.encoder_devices = count_param(text, p, 1, 1, "the encoder's devices");
  } else if (auto kind = schedule_kind(p.head)) {
    spec.kind = *kind;
    if (spec.kind == ScheduleKind::kInterleaved) {
      spec.chunks = count_param(text, p, 2, 2, "the model chunks per rank");
    } else if (!p.params.empty()) {
      throw base::InputError(
          fmt::format("'{}': the {} schedule takes no ':' parameter", text, p.head));
    }
  } else {
    unknown(text, p.head);
  }
  return spec;
}

std::string schedule_spec_forms() {
  std::string out;
  for (std::string_view name : schedule_names()) {
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", name,
                       name == "interleaved" ? "[:chunks]" : "");
  }
  return out +
         ", transpose[:round_robin|min|greedy][:recompute|owner], encoder-stages[:k], "
         "encoder-separate[:n]";
}

}  // namespace tessera::synth::schedule
