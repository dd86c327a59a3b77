// SPDX-License-Identifier: Apache-2.0
// Reads a profile's `collective:` section: the Simple protocol's launch and step costs, the
// LL / LL128 protocols, the channels a collective occupies and the scale-up switch's
// in-network reduction (NVLS). Errors carry the value's file:line:col.
#pragma once

#include "base/yaml_reader.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

// `ll`, `ll128`, `channels` and `nvls` are optional: without them the tuner has only the
// Simple protocol, one channel and no in-switch reduction.
void read_collective_section(const base::YamlNode& node, Profile& p);

}  // namespace tessera::hw
