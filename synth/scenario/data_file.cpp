// SPDX-License-Identifier: Apache-2.0
// The line-oriented data files a scenario names (a samples file, an expert loads file).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "synth/scenario/readers.h"

namespace tessera::synth::reader {

DataFile read_data_file(const base::YamlNode& at, const std::string& file, std::string_view what) {
  DataFile out;
  const std::filesystem::path path = std::filesystem::path(at.file()).parent_path() / file;
  out.path = path.string();
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) {  // not a FIFO or /dev/zero: no endless read
    in.open(path);
  }
  if (!in.is_open()) {
    at.fail(fmt::format("cannot read the {} '{}' (expected a regular file)", what, out.path));
  }
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      out.lines.push_back({no, line});
    }
  }
  return out;
}

}  // namespace tessera::synth::reader
