// SPDX-License-Identifier: Apache-2.0
// Published model architectures by name ("gpt3-175b", "llama3-70b", ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth {

std::optional<ModelConfig> model_preset(std::string_view name);
std::vector<std::string_view> model_preset_names();

// Published vision encoders by name ("qwen2-vl-vit").
std::optional<EncoderConfig> encoder_preset(std::string_view name);
std::vector<std::string_view> encoder_preset_names();

}  // namespace tessera::synth
