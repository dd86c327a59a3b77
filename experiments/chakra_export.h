// SPDX-License-Identifier: Apache-2.0
// A scenario's step as Chakra traces: every rank's graph (one rank in memory at a time, each
// a relabelled instance of its rank class), the communicator groups, and the ASTRA-sim
// configs that describe its cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "synth/scenario/scenario.h"

namespace tessera::experiments {

struct ChakraExport {
  std::int32_t ranks = 0;   // <prefix>.<rank>.et files written
  std::size_t nodes = 0;    // nodes over all of them
  std::string groups_path;  // <prefix>.groups.json, "" when the step has no groups
  bool astra = false;       // <prefix>.network.yml, .system.json, .memory.json written
};

// Synthesizes `s` and writes its traces under `prefix` (DIR/NAME; DIR must exist). ASTRA-sim's
// analytical network needs at least 2 NPUs: a 1-device scenario gets no configs.
ChakraExport export_chakra(const synth::Scenario& s, const std::string& prefix);

}  // namespace tessera::experiments
