// SPDX-License-Identifier: Apache-2.0
#include "experiments/value_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string_view>

#include "base/error.h"

namespace tessera::experiments {

namespace {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) {
    return "";
  }
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

}  // namespace

KeyValues parse_key_values(const std::string& flag, const std::string& arg,
                           const std::string& form) {
  auto bad = [&](const std::string& why) {
    return base::InputError(
        fmt::format("{} {}: {}; expected {}", flag, arg.empty() ? "''" : arg, why, form));
  };
  auto eq = arg.find('=');
  if (eq == std::string::npos) {
    throw bad("no '='");
  }
  KeyValues out;
  out.key = trim(std::string_view(arg).substr(0, eq));
  std::string list = arg.substr(eq + 1);
  if (trim(list).empty()) {
    throw bad("no values");
  }
  std::stringstream ss(list + ",");  // so a trailing comma leaves an empty value to reject
  for (std::string v; std::getline(ss, v, ',');) {
    v = trim(v);
    if (v.empty()) {
      throw bad(fmt::format("value {} is empty", out.values.size() + 1));
    }
    if (std::find(out.values.begin(), out.values.end(), v) != out.values.end()) {
      throw bad(fmt::format("value '{}' is given twice", v));
    }
    out.values.push_back(v);
  }
  return out;
}

}  // namespace tessera::experiments
