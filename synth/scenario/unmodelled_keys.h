// SPDX-License-Identifier: Apache-2.0
// Keys a user may reasonably write for features Tessera does not model yet (expert and
// context parallelism, ZeRO stages, FP8, CUDA graphs): named as such, never "did you mean".
#pragma once

#include <string_view>

#include "base/yaml_reader.h"

namespace tessera::synth {

// Throws base::InputError at the key (or value) when `section` (the mapping at top-level key
// `section_name`) holds a key or value that names a feature that is not modelled yet.
void reject_unmodelled(const base::YamlNode& section, std::string_view section_name);

}  // namespace tessera::synth
