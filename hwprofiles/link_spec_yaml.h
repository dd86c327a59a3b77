// SPDX-License-Identifier: Apache-2.0
// YAML readers shared by hardware profiles and topology specs: link specs ({bandwidth,
// latency, efficiency}) and fractions in (0, 1]. Errors carry the value's file:line:col.
#pragma once

#include "base/yaml_reader.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

// A number in (0, 1]: an efficiency or an achieved fraction of a peak.
double read_fraction(const base::YamlNode& node);

// How strictly read_link_spec treats absent values.
enum class LinkFields {
  kRequired,  // hardware profile: bandwidth, latency and efficiency must all be given
  kOverride,  // topology override: every key optional; absent or zero means "inherit" (0)
};

// Reads a mapping {bandwidth, latency, efficiency}; unknown keys are errors.
LinkSpec read_link_spec(const base::YamlNode& node, LinkFields fields);

}  // namespace tessera::hw
