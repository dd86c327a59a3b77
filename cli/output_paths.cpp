// SPDX-License-Identifier: Apache-2.0
#include "cli/output_paths.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/error.h"

namespace tessera::cli {

namespace fs = std::filesystem;

namespace {

base::InputError bad_output(const std::string& flag, const std::string& dir,
                            const std::string& why) {
  return base::InputError(base::SourceLoc{dir, 0, 0}, fmt::format("{} {}: {}", flag, dir, why));
}

// Writes and removes a probe file: permissions, read-only mounts and full quotas all show.
void probe_writable(const std::string& flag, const std::string& dir) {
  fs::path probe = fs::path(dir) / fmt::format(".tessera-write-probe-{}", ::getpid());
  {
    std::ofstream out(probe);
    if (!out || !(out << "probe\n") || !out.flush()) {
      throw bad_output(flag, dir, "cannot write into this folder");
    }
  }
  std::error_code ec;
  fs::remove(probe, ec);
}

}  // namespace

void prepare_output_dir(const std::string& flag, const std::string& dir) {
  if (dir.empty()) {
    throw bad_output(flag, "''", "expected a folder name");
  }
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    throw bad_output(flag, dir, "exists and is not a folder; name a folder for the reports");
  }
  if (!fs::exists(st)) {
    fs::create_directories(dir, ec);
    if (ec) {
      throw bad_output(flag, dir, fmt::format("cannot create this folder ({})", ec.message()));
    }
  }
  probe_writable(flag, dir);
}

void prepare_output_prefix(const std::string& flag, const std::string& prefix) {
  fs::path p(prefix);
  if (prefix.empty() || !p.has_filename()) {
    throw bad_output(flag, prefix.empty() ? "''" : prefix,
                     "expected a prefix DIR/NAME for the files NAME.<rank>.et");
  }
  std::string parent = p.parent_path().string();
  prepare_output_dir(flag, parent.empty() ? "." : parent);
}

void check_input_file(const std::string& what, const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) {
    return;  // the reader says "cannot open file", naming it
  }
  if (fs::is_directory(st)) {
    throw base::InputError(base::SourceLoc{path, 0, 0},
                           fmt::format("the {} is a directory; expected a file", what));
  }
  if (!fs::is_regular_file(st)) {
    throw base::InputError(base::SourceLoc{path, 0, 0},
                           fmt::format("the {} is not a regular file", what));
  }
}

void check_profile_arg(const std::string& flag, const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml")) {
    check_input_file(flag + " profile", name_or_path);
  }
}

}  // namespace tessera::cli
