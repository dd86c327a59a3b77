// SPDX-License-Identifier: Apache-2.0
// Where a multimodal model's encoder region runs (ScheduleConfig::encoder), registered
// explicitly by name: the single source of the names a scenario's `encoder:` key, spec strings
// (`encoder-stages:2`), `tessera list` and "did you mean" use.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::schedule {

struct EncoderPlacementEntry {
  EncoderPlacement placement = EncoderPlacement::kInline;
  std::string_view name;       // the `encoder:` value: "stages"
  std::string_view spec_head;  // its spec string's head: "encoder-stages"; "" for none
  std::string_view spec_form;  // the whole form: "encoder-stages[:k]"
};

class EncoderPlacementRegistry {
 public:
  void add(const EncoderPlacementEntry& entry);
  [[nodiscard]] const EncoderPlacementEntry* find(std::string_view name) const;  // nullptr
  [[nodiscard]] const EncoderPlacementEntry* find_spec(std::string_view head) const;
  [[nodiscard]] const EncoderPlacementEntry& get(EncoderPlacement placement) const;
  [[nodiscard]] std::span<const std::string_view> names() const { return names_; }
  [[nodiscard]] std::span<const EncoderPlacementEntry> entries() const { return entries_; }

 private:
  std::vector<EncoderPlacementEntry> entries_;
  std::vector<std::string_view> names_;  // in registration order: the order `list` prints
};

const EncoderPlacementRegistry& builtin_encoder_placements();
void register_builtin_encoder_placements(EncoderPlacementRegistry& registry);

}  // namespace tessera::synth::schedule
