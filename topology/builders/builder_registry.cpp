// SPDX-License-Identifier: Apache-2.0
// The registry of topology builders and the one place that lists the built-in ones.
#include <fmt/format.h>

#include "base/error.h"
#include "topology/builders/builder.h"

namespace tessera::topology {

void BuilderRegistry::add(std::string_view kind, BuildFn fn) {
  if (find(kind) != nullptr) {
    throw base::InternalError(fmt::format("topology builder '{}' registered twice", kind));
  }
  entries_.emplace_back(kind, fn);
}

BuildFn BuilderRegistry::find(std::string_view kind) const {
  for (const auto& [name, fn] : entries_) {
    if (name == kind) {
      return fn;
    }
  }
  return nullptr;
}

std::vector<std::string_view> BuilderRegistry::kinds() const {
  std::vector<std::string_view> out;
  out.reserve(entries_.size());
  for (const auto& entry : entries_) {
    out.push_back(entry.first);
  }
  return out;
}

void register_builtin_builders(BuilderRegistry& registry) {
  register_nvswitch_fat_tree(registry);
  register_hccs_mesh(registry);
  register_ub_supernode(registry);
}

const BuilderRegistry& builtin_builders() {
  static const BuilderRegistry registry = [] {
    BuilderRegistry r;
    register_builtin_builders(r);
    return r;
  }();
  return registry;
}

std::vector<std::string> topology_kinds() {
  std::vector<std::string> out;
  for (auto kind : builtin_builders().kinds()) {
    out.emplace_back(kind);
  }
  return out;
}

}  // namespace tessera::topology
