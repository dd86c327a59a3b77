// SPDX-License-Identifier: Apache-2.0
// A registry of named implementations of one role (a factory function or an object per
// name), filled by explicit register_*() calls, in registration order. Its names feed
// "did you mean", --help and `tessera list`.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

namespace tessera::base {

template <typename T>
class Registry {
 public:
  void add(std::string_view name, T value) { entries_.emplace_back(name, std::move(value)); }

  [[nodiscard]] const T* find(std::string_view name) const {
    for (const auto& [n, v] : entries_) {
      if (n == name) {
        return &v;
      }
    }
    return nullptr;
  }

  // The entry, or base::InputError "unknown <role> 'name'; known: a, b".
  [[nodiscard]] const T& get(std::string_view role, std::string_view name) const {
    const T* v = find(name);
    if (v == nullptr) {
      throw InputError(
          fmt::format("unknown {} '{}'; known: {}", role, name, fmt::join(names(), ", ")));
    }
    return *v;
  }

  [[nodiscard]] std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_) {
      out.push_back(e.first);
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string_view, T>> entries_;
};

}  // namespace tessera::base
