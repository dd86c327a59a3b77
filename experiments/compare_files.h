// SPDX-License-Identifier: Apache-2.0
// The files `tessera compare --out` writes: compare.csv and compare.json (one row per
// schedule), and with --sweep sweep.csv, sweep.json and sweep.svg (the speedup chart).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "experiments/compare.h"
#include "experiments/sweep.h"

namespace tessera::experiments {

// A CSV cell in double quotes (inner quotes doubled).
std::string csv_quote(const std::string& s);
// `path` opened for writing; base::InputError naming it when it cannot be.
std::ofstream open_for_writing(const std::string& path);

// A spec as a file-name part: "interleaved:2" -> "interleaved-2".
std::string file_safe(std::string spec);

void write_compare_tables(const std::string& dir, const std::vector<Row>& rows);
void write_sweep_tables(const std::string& dir, const SweepResult& res);
void write_sweep_chart(const std::string& path, const SweepResult& res);

}  // namespace tessera::experiments
