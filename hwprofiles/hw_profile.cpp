// SPDX-License-Identifier: Apache-2.0
// Finding a profile: a bare name is looked up in the shipped hwprofiles/ folder, anything
// that looks like a path is read as given.
#include "hwprofiles/hw_profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "base/data_dir.h"
#include "base/error.h"
#include "base/yaml_reader.h"

namespace tessera::hw {

namespace {

namespace fs = std::filesystem;

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

std::string unknown_profile_hint(const std::string& name) {
  std::vector<std::string> names = profile_names();
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string list = fmt::format("{}", fmt::join(names, ", "));
  std::string guess = base::nearest(name, views);
  return guess.empty() ? fmt::format("available profiles: {}", list)
                       : fmt::format("did you mean '{}'? (available profiles: {})", guess, list);
}

}  // namespace

std::string profile_file(const std::string& name_or_path, const base::SourceLoc& where) {
  if (looks_like_path(name_or_path)) {
    return name_or_path;
  }
  fs::path candidate = fs::path(profiles_dir()) / (name_or_path + ".yaml");
  std::error_code ec;  // a name too long for a path is unknown too, not an exception
  if (!fs::is_regular_file(candidate, ec)) {
    throw base::InputError(where, fmt::format("unknown hardware profile '{}'", name_or_path),
                           unknown_profile_hint(name_or_path));
  }
  return candidate.string();
}

std::string profiles_dir() {
  return base::data_dir("hwprofiles", TESSERA_HWPROFILES_DIR);
}

std::vector<std::string> profile_names() {
  return base::yaml_stems(profiles_dir(), "hardware profile");
}

Profile load_profile(const std::string& name_or_path, const base::SourceLoc& where) {
  std::string path = profile_file(name_or_path, where);
  base::YamlNode root = base::YamlNode::load_file(path);
  return profile_from_yaml(root, fs::path(path).stem().string());
}

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

double PowerModel::clock_scale(double activity) const {
  if (tdp <= 0.0 || limit <= 0.0 || limit >= tdp || tdp <= idle || activity <= 0.0) {
    return 1.0;
  }
  const double headroom = std::max(limit - idle, 0.0) / ((tdp - idle) * activity);
  return std::min(1.0, std::pow(headroom, exponent));
}

std::string profile_for_device(std::string_view text) {
  const std::string haystack = lower(text);
  std::string best;
  std::size_t best_len = 0;
  for (const std::string& name : profile_names()) {
    for (const std::string& device : load_profile(name).device_names) {
      if (device.size() > best_len && haystack.find(lower(device)) != std::string::npos) {
        best = name;
        best_len = device.size();
      }
    }
  }
  return best;
}

Profile load_profile(const std::string& name_or_path) {
  return load_profile(name_or_path, base::SourceLoc{});
}

}  // namespace tessera::hw
