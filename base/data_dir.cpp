// SPDX-License-Identifier: Apache-2.0
#include "base/data_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "base/error.h"

namespace tessera::base {

namespace fs = std::filesystem;

namespace {

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

}  // namespace

std::string data_dir(std::string_view sub, const std::string& build_tree_dir) {
  if (const char* env = std::getenv("TESSERA_DATA_DIR"); env != nullptr && *env != '\0') {
    fs::path p = fs::path(env) / sub;
    if (!is_dir(p)) {
      throw InputError(
          fmt::format("TESSERA_DATA_DIR is set to '{}', but {} is not a folder", env, p.string()));
    }
    return p.string();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "tessera" / sub;
    if (is_dir(installed)) {
      return installed.string();
    }
  }
  return build_tree_dir;
}

std::vector<std::string> yaml_stems(const std::string& dir, std::string_view what) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    throw InputError(
        fmt::format("cannot read the {} folder {}: {} (set TESSERA_DATA_DIR to the folder that "
                    "holds hwprofiles/ and topology/presets/)",
                    what, dir, ec.message()));
  }
  std::vector<std::string> names;
  for (const auto& entry : it) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".yaml") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tessera::base
