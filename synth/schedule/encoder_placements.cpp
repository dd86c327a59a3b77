// SPDX-License-Identifier: Apache-2.0
// The built-in encoder placements. What each one builds lives in synth/build (stage_builder,
// synthesize) and synth/schedule/transpose; this file only names them.
#include "synth/schedule/encoder_placements.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tessera::synth::schedule {

void EncoderPlacementRegistry::add(const EncoderPlacementEntry& entry) {
  if (find(entry.name) != nullptr) {
    throw base::InternalError(fmt::format("encoder placement '{}' registered twice", entry.name));
  }
  entries_.push_back(entry);
  names_.push_back(entry.name);
}

const EncoderPlacementEntry* EncoderPlacementRegistry::find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) {
      return &e;
    }
  }
  return nullptr;
}

const EncoderPlacementEntry* EncoderPlacementRegistry::find_spec(std::string_view head) const {
  for (const auto& e : entries_) {
    if (!e.spec_head.empty() && e.spec_head == head) {
      return &e;
    }
  }
  return nullptr;
}

const EncoderPlacementEntry& EncoderPlacementRegistry::get(EncoderPlacement placement) const {
  for (const auto& e : entries_) {
    if (e.placement == placement) {
      return e;
    }
  }
  throw base::InternalError(
      fmt::format("no encoder placement registered for {}", static_cast<int>(placement)));
}

void register_builtin_encoder_placements(EncoderPlacementRegistry& registry) {
  // In the first pipeline stage (Megatron's default): what a plain skeleton name means.
  registry.add({EncoderPlacement::kInline, "inline", "", ""});
  // As its own first pipeline stage(s), an uneven split of the pipeline.
  registry.add({EncoderPlacement::kStages, "stages", "encoder-stages", "encoder-stages[:k]"});
  // Replicated on every pipeline rank, its forwards in the warmup bubbles (Mpipe).
  registry.add({EncoderPlacement::kTranspose, "transpose", "transpose",
                "transpose[:round_robin|min|greedy][:recompute|owner]"});
  // On devices of its own after the LLM's (DistTrain-style disaggregation).
  registry.add(
      {EncoderPlacement::kSeparate, "separate", "encoder-separate", "encoder-separate[:n]"});
}

const EncoderPlacementRegistry& builtin_encoder_placements() {
  static const EncoderPlacementRegistry registry = [] {
    EncoderPlacementRegistry r;
    register_builtin_encoder_placements(r);
    return r;
  }();
  return registry;
}

}  // namespace tessera::synth::schedule
