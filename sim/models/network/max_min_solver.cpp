// SPDX-License-Identifier: Apache-2.0
#include "sim/models/network/max_min_solver.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "base/error.h"

namespace tessera::models {

MaxMinSolver::MaxMinSolver(const PathTable& table)
    : table_(table),
      remaining_(table.num_vlinks(), 0.0),
      weight_(table.num_vlinks(), 0),
      stamp_(table.num_vlinks(), 0),
      bottleneck_(table.num_vlinks(), 0) {}

void MaxMinSolver::load(const std::vector<PathId>& paths) {
  ++generation_;
  touched_.clear();
  for (PathId p : paths) {
    const auto& uses = table_.virtual_uses(p);
    if (uses.empty()) {
      throw base::InternalError("MaxMinSolver: a transfer whose path crosses no link");
    }
    for (const LinkUse& u : uses) {
      auto v = static_cast<std::size_t>(u.link);
      if (stamp_[v] != generation_) {
        stamp_[v] = generation_;
        remaining_[v] = table_.vlink_capacity(u.link);
        weight_[v] = 0;
        touched_.push_back(u.link);
      }
      weight_[v] += u.mult;
    }
  }
}

double MaxMinSolver::mark_bottlenecks() {
  double share = std::numeric_limits<double>::infinity();
  for (std::int32_t v : touched_) {
    auto i = static_cast<std::size_t>(v);
    if (weight_[i] > 0) {
      share = std::min(share, remaining_[i] / static_cast<double>(weight_[i]));
    }
  }
  for (std::int32_t v : touched_) {  // every link at that share saturates together
    auto i = static_cast<std::size_t>(v);
    bottleneck_[i] = weight_[i] > 0 && remaining_[i] / static_cast<double>(weight_[i]) <= share;
  }
  return share;
}

void MaxMinSolver::freeze(PathId path, double rate) {
  for (const LinkUse& u : table_.virtual_uses(path)) {
    auto v = static_cast<std::size_t>(u.link);
    remaining_[v] -= rate * u.mult;
    weight_[v] -= u.mult;
  }
}

void MaxMinSolver::solve(const std::vector<PathId>& paths, std::vector<double>& rates) {
  load(paths);
  rates.assign(paths.size(), 0.0);
  frozen_.assign(paths.size(), 0);
  std::size_t unfrozen = paths.size();
  double level = 0.0;
  while (unfrozen > 0) {
    double share = mark_bottlenecks();
    if (!(share < std::numeric_limits<double>::infinity())) {
      throw base::InternalError("MaxMinSolver: unfrozen transfers but no loaded link");
    }
    level = std::max(level, share);  // rounding must not lower a later share
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const auto& uses = table_.virtual_uses(paths[i]);
      if (frozen_[i] == 0 && std::any_of(uses.begin(), uses.end(), [this](const LinkUse& u) {
            return bottleneck_[static_cast<std::size_t>(u.link)] != 0;
          })) {
        frozen_[i] = 1;
        rates[i] = level;
        freeze(paths[i], level);
        --unfrozen;
      }
    }
  }
}

}  // namespace tessera::models
