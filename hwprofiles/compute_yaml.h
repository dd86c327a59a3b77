// SPDX-License-Identifier: Apache-2.0
// Readers of a profile's compute-model sections (gemm, attention, launch); every key is
// checked and every rejected value is reported at its own file:line:col.
#pragma once

#include "base/yaml_reader.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

void read_gemm(const base::YamlNode& node, GemmModel& g);
void read_attention(const base::YamlNode& node, AttentionModel& a);
void read_launch(const base::YamlNode& node, LaunchCosts& l);

}  // namespace tessera::hw
