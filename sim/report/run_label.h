// SPDX-License-Identifier: Apache-2.0
// Names for the report's headline, supplied by the caller (the scenario and cluster it ran).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sim::report {

struct RunLabel {
  std::string scenario;
  std::string model;
  std::string hardware;
  std::string topology;
  std::string parallelism;  // "TP8 PP8 DP16 SP"
  std::string schedule;
  std::int64_t devices = 0;
  std::int64_t microbatches = 0;
  std::vector<std::string> effects_off;  // modelled effects switched off (--without)
};

}  // namespace tessera::sim::report
