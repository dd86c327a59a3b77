// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/route_symmetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/models/collective/ring_collective.h"

namespace tessera::exec {

namespace {

using LinkKind = std::tuple<int, double, double, base::SimTime>;
// Per group of the rank: (group class, ring signature, hop out of the rank, hop into it).
using RankSignature = std::vector<std::array<std::int32_t, 4>>;

// Interns route and group signatures into small integers.
class SignatureTable {
 public:
  explicit SignatureTable(const topology::Cluster& cluster) : cluster_(cluster) {}

  std::int32_t group_signature(const graph::Group& group) {
    flows_.clear();
    models::append_flows(models::FlowShape::kRing, group.ranks, cluster_, flows_);
    std::vector<std::int32_t> hops;
    hops.reserve(flows_.size());
    for (const models::Flow& f : flows_) {
      hops.push_back(route_signature(f.src, f.dst));
    }
    std::sort(hops.begin(), hops.end());
    return intern(groups_, std::move(hops));
  }

  std::int32_t route_signature(std::int32_t src, std::int32_t dst) {
    std::vector<LinkKind> kinds;
    if (src != dst) {
      for (topology::LinkId l : cluster_.route(src, dst)) {
        const topology::Link& link = cluster_.link(l);
        kinds.emplace_back(static_cast<int>(link.cls), link.bandwidth, link.efficiency,
                           link.latency);
      }
    }
    return intern(routes_, std::move(kinds));
  }

 private:
  template <typename Key>
  static std::int32_t intern(std::map<Key, std::int32_t>& table, Key key) {
    auto next = static_cast<std::int32_t>(table.size());
    return table.try_emplace(std::move(key), next).first->second;
  }

  const topology::Cluster& cluster_;
  std::vector<models::Flow> flows_;
  std::map<std::vector<LinkKind>, std::int32_t> routes_;
  std::map<std::vector<std::int32_t>, std::int32_t> groups_;
};

// A collective moves its whole ring together, so only the ring's multiset of hops matters;
// pipeline groups carry sends, so their hops out of and into the rank matter too.
RankSignature rank_signature(const graph::ExecGraph& graph, std::int32_t rank,
                             const GroupClasses& classes,
                             const std::vector<std::int32_t>& group_sig, SignatureTable& table) {
  RankSignature sig;
  for (std::int32_t g : classes.groups_of_rank[static_cast<std::size_t>(rank)]) {
    auto gi = static_cast<std::size_t>(g);
    std::array<std::int32_t, 4> entry{classes.class_of_group[gi], group_sig[gi], -1, -1};
    const graph::Group& group = graph.groups[gi];
    if (group.kind == graph::GroupKind::kPP && group.ranks.size() > 1) {
      const auto n = static_cast<std::int32_t>(group.ranks.size());
      const std::int32_t pos = position_in(group, rank);
      std::int32_t next = group.ranks[static_cast<std::size_t>((pos + 1) % n)];
      std::int32_t prev = group.ranks[static_cast<std::size_t>((pos + n - 1) % n)];
      entry[2] = table.route_signature(rank, next);
      entry[3] = table.route_signature(prev, rank);
    }
    sig.push_back(entry);
  }
  std::sort(sig.begin(), sig.end());
  return sig;
}

}  // namespace

std::string find_asymmetry(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                           const GroupClasses& classes) {
  SignatureTable table(cluster);
  std::vector<std::int32_t> group_sig(graph.groups.size());
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    group_sig[g] = table.group_signature(graph.groups[g]);
  }
  std::vector<RankSignature> rep_sig(graph.classes.size());
  for (std::size_t c = 0; c < graph.classes.size(); ++c) {
    rep_sig[c] = rank_signature(graph, graph.class_rep[c], classes, group_sig, table);
  }
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    auto c = static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(r)]);
    if (graph.class_rep[c] != r &&
        rank_signature(graph, r, classes, group_sig, table) != rep_sig[c]) {
      return fmt::format(
          "rank {} of rank class {} sees different routes than its "
          "representative, rank {}",
          r, c, graph.class_rep[c]);
    }
  }
  return "";
}

}  // namespace tessera::exec
