// SPDX-License-Identifier: Apache-2.0
// The schedule and encoder placement names scenario.h promises (`tessera list`, labels),
// fed by the registries.
#include <fmt/format.h>

#include "synth/scenario/scenario.h"
#include "synth/schedule/encoder_placements.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth {

std::span<const std::string_view> schedule_names() {
  return schedule::builtin_schedules().names();
}

std::span<const std::string_view> encoder_placement_names() {
  return schedule::builtin_encoder_placements().names();
}

std::string_view schedule_name(ScheduleKind k) {
  return schedule::builtin_schedules().get(k).name();
}

std::optional<ScheduleKind> schedule_kind(std::string_view name) {
  const auto* s = schedule::builtin_schedules().find(name);
  return s != nullptr ? std::optional<ScheduleKind>(s->kind()) : std::nullopt;
}

std::string schedule_label(const ScheduleConfig& cfg) {
  std::string body = schedule::builtin_schedules().get(cfg.kind).label(cfg);
  switch (cfg.encoder) {
    case EncoderPlacement::kInline:
      return body;
    case EncoderPlacement::kStages:
      return fmt::format("{} + encoder stage{} ({})", body, cfg.encoder_stages > 1 ? "s" : "",
                         cfg.encoder_stages);
    case EncoderPlacement::kSeparate:
      return fmt::format("{} + encoder on {} more device{}", body, cfg.encoder_devices,
                         cfg.encoder_devices > 1 ? "s" : "");
    case EncoderPlacement::kTranspose:
      return fmt::format("transpose ({}{}, {})", owner_mode_name(cfg.owners),
                         cfg.encoder_backward == EncoderBackward::kOwner ? ", owner bwd" : "",
                         body);
  }
  return body;
}

}  // namespace tessera::synth
