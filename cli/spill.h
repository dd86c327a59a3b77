// SPDX-License-Identifier: Apache-2.0
// Printing Mpipe's cost model against the simulation (experiments::analyze_spill): a table
// per pipeline rank on the console, transpose.json with --out.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "experiments/spill.h"

namespace tessera::cli {

void print_spill(std::ostream& out, const experiments::SpillAnalysis& a);
nlohmann::json spill_json(const experiments::SpillAnalysis& a);

}  // namespace tessera::cli
