// SPDX-License-Identifier: Apache-2.0
#include "sim/models/network/path_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "base/error.h"

namespace tessera::models {

PathTable::PathTable(std::vector<double> link_capacity)
    : link_capacity_(std::move(link_capacity)) {}

PathId PathTable::add(std::vector<LinkUse> uses) {
  if (finalized_) {
    throw base::InternalError("PathTable::add after finalize");
  }
  std::sort(uses.begin(), uses.end(),
            [](const LinkUse& a, const LinkUse& b) { return a.link < b.link; });
  std::vector<LinkUse> merged;
  for (const LinkUse& u : uses) {
    if (u.link < 0 || static_cast<std::size_t>(u.link) >= link_capacity_.size() || u.mult <= 0) {
      throw base::InternalError(fmt::format("PathTable: bad link use {} x{}", u.link, u.mult));
    }
    if (!merged.empty() && merged.back().link == u.link) {
      merged.back().mult += u.mult;
    } else {
      merged.push_back(u);
    }
  }
  paths_.push_back(std::move(merged));
  return static_cast<PathId>(paths_.size() - 1);
}

void PathTable::fold_private(std::int32_t link, std::int32_t path_id, std::int32_t mult) {
  // The link's only constraint is r <= C / mult.
  double cap = link_capacity_[static_cast<std::size_t>(link)] / mult;
  auto path = static_cast<std::size_t>(path_id);
  std::int32_t& v = private_vlink_[path];
  if (v < 0) {
    v = static_cast<std::int32_t>(vcap_.size());
    vcap_.push_back(cap);
    vuses_[path].push_back({v, 1});
  } else {
    vcap_[static_cast<std::size_t>(v)] = std::min(vcap_[static_cast<std::size_t>(v)], cap);
  }
}

void PathTable::fold_shared(std::int32_t link, const PathUses& users,
                            std::map<PathUses, std::int32_t>& ids) {
  const double cap = link_capacity_[static_cast<std::size_t>(link)];
  auto [it, inserted] = ids.try_emplace(users, static_cast<std::int32_t>(vcap_.size()));
  if (!inserted) {
    auto v = static_cast<std::size_t>(it->second);
    vcap_[v] = std::min(vcap_[v], cap);
    return;
  }
  vcap_.push_back(cap);
  for (const auto& [path, mult] : users) {
    vuses_[static_cast<std::size_t>(path)].push_back({it->second, mult});
  }
}

void PathTable::finalize() {
  if (finalized_) {
    return;
  }
  // users[l]: the (path, mult) pairs crossing link l, in path order.
  std::vector<PathUses> users(link_capacity_.size());
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    for (const LinkUse& u : paths_[p]) {
      users[static_cast<std::size_t>(u.link)].emplace_back(static_cast<std::int32_t>(p), u.mult);
    }
  }
  vuses_.assign(paths_.size(), {});
  private_vlink_.assign(paths_.size(), -1);
  std::map<PathUses, std::int32_t> shared;
  for (std::size_t l = 0; l < users.size(); ++l) {
    if (users[l].empty()) {
      continue;
    }
    if (link_capacity_[l] <= 0.0) {
      throw base::InputError(
          fmt::format("network link {} has no bandwidth but carries traffic", l));
    }
    const auto link = static_cast<std::int32_t>(l);
    if (users[l].size() == 1) {
      fold_private(link, users[l].front().first, users[l].front().second);
    } else {
      fold_shared(link, users[l], shared);
    }
  }
  finalized_ = true;
}

}  // namespace tessera::models
