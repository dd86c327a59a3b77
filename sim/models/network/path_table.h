// SPDX-License-Identifier: Apache-2.0
// Every set of links a run's transfers will load, registered before time starts and then
// compressed into "virtual links" so that the max-min solver touches a handful of
// constraints per transfer instead of thousands of physical links.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace tessera::models {

using PathId = std::int32_t;
constexpr PathId kNoPath = -1;

// A transfer moving at rate r loads link `link` with r * mult (mult flows of it cross there).
struct LinkUse {
  std::int32_t link = 0;
  std::int32_t mult = 0;
};

// Contract: add() every path, then finalize() once, then query. Compression is exact:
// a link used by a single path P with multiplicity m is the constraint r_P <= C/m, so all of
// P's private links fold into one virtual link of capacity min(C/m); links shared by the same
// paths with the same multiplicities fold into one virtual link of capacity min(C).
// Capacities are in bytes per picosecond and must be > 0 (base::InputError otherwise).
class PathTable {
 public:
  explicit PathTable(std::vector<double> link_capacity);
  PathId add(std::vector<LinkUse> uses);  // merges repeated links; sorted by link id
  void finalize();

  [[nodiscard]] const std::vector<LinkUse>& virtual_uses(PathId p) const {
    return vuses_[static_cast<std::size_t>(p)];
  }
  [[nodiscard]] const std::vector<LinkUse>& physical_uses(PathId p) const {
    return paths_[static_cast<std::size_t>(p)];
  }
  [[nodiscard]] double vlink_capacity(std::int32_t v) const {
    return vcap_[static_cast<std::size_t>(v)];
  }
  [[nodiscard]] std::size_t num_vlinks() const { return vcap_.size(); }
  [[nodiscard]] std::size_t num_paths() const { return paths_.size(); }
  [[nodiscard]] bool finalized() const { return finalized_; }

 private:
  using PathUses = std::vector<std::pair<std::int32_t, std::int32_t>>;  // (path, mult)
  void fold_private(std::int32_t link, std::int32_t path, std::int32_t mult);
  void fold_shared(std::int32_t link, const PathUses& users, std::map<PathUses, std::int32_t>& ids);
  std::vector<double> link_capacity_;
  std::vector<std::vector<LinkUse>> paths_;  // physical (link, mult), per path
  std::vector<std::vector<LinkUse>> vuses_;  // virtual (vlink, mult), per path
  std::vector<double> vcap_;
  std::vector<std::int32_t> private_vlink_;  // per path, -1 until it has a private link
  bool finalized_ = false;
};

}  // namespace tessera::models
