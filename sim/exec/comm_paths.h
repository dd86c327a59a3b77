// SPDX-License-Identifier: Apache-2.0
// The network paths of a run's communication, registered before time starts: one per
// (match key, collective algorithm the tuner may choose for it) for collectives, covering
// every group copy the key stands for (a staged algorithm: one per stage, per collective
// type), and one per (source, destination) device pair for sends, loaded by the sends it
// stands for.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/exec/sharing/sharing_plan.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/tuner.h"
#include "sim/models/network/path_table.h"
#include "topology/cluster.h"

namespace tessera::exec {

struct CollectivePath {
  models::PathId path = models::kNoPath;  // kNoPath: nothing crosses a link
  base::SimTime hop_latency = 0;          // slowest ring hop's path latency
  int channels = 1;                       // parallel rings
  double rate = 0.0;  // bytes/ps per flow at the bottleneck link, all copies' flows counted
};

struct P2PPath {
  models::PathId path = models::kNoPath;
  base::SimTime latency = 0;  // path latency
};

// Contract: after construction `table` holds every path the plan's instances can start;
// asking for one they cannot is a bug (base::InternalError). When shared, a collective path
// routes the flows of every group in the match key's class, so the one simulated transfer
// loads each link with all copies' flows; a send path is the send's own route, each link
// counted as often as the sends it stands for (plan.send_copies) cross it, so copies that
// share its links slow it as they would, while the simulated send still runs at its own pace.
class CommPaths {
 public:
  CommPaths(const graph::ExecGraph& graph, const SharingPlan& plan,
            const topology::Cluster& cluster, const hw::Profile& profile,
            const models::TunerOptions& options, models::PathTable& table);
  // `algorithm` indexes models::builtin_collectives().
  [[nodiscard]] const CollectivePath& collective(std::int32_t match, std::size_t algorithm) const;
  // The tuner's candidates for a collective of type `c` on match key `match`, each with its
  // path; asking for a pair no instance uses is a bug (base::InternalError).
  [[nodiscard]] const std::vector<models::Candidate>& candidates(std::int32_t match,
                                                                 graph::CollType c) const;
  [[nodiscard]] const P2PPath& p2p(std::int32_t src, std::int32_t dst) const;
  // A staged algorithm's paths for type `c` on `match`, one per stage in order.
  [[nodiscard]] const std::vector<CollectivePath>& stage_paths(std::int32_t match,
                                                               graph::CollType c,
                                                               std::size_t algorithm) const;

 private:
  static std::uint64_t pair_key(std::int32_t src, std::int32_t dst) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32U) |
           static_cast<std::uint32_t>(dst);
  }
  static std::uint64_t type_key(std::int32_t match, graph::CollType c) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(match)) << 8U) |
           static_cast<std::uint64_t>(c);
  }
  void build_collective(std::size_t slot, const graph::ExecGraph& graph, const SharingPlan& plan,
                        const topology::Cluster& cluster, models::PathTable& table);
  void build_stages(std::int32_t match, graph::CollType c, std::size_t algorithm,
                    const graph::ExecGraph& graph, const SharingPlan& plan,
                    const topology::Cluster& cluster, models::PathTable& table);
  void build_candidates(const graph::ExecGraph& graph, const SharingPlan& plan,
                        const topology::Cluster& cluster);
  static std::uint64_t stage_key(std::int32_t match, graph::CollType c, std::size_t algorithm) {
    return (type_key(match, c) << 8U) | algorithm;
  }

  std::vector<double> capacity_;      // per link, bytes/ps
  std::vector<CollectivePath> coll_;  // match * number of algorithms + algorithm
  std::vector<char> coll_built_;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> wanted_;  // type_key -> algorithms
  std::unordered_map<std::uint64_t, std::vector<models::Candidate>> cands_;
  std::unordered_map<std::uint64_t, P2PPath> p2p_;
  std::unordered_map<std::uint64_t, std::vector<CollectivePath>> stages_;  // stage_key -> paths
};

}  // namespace tessera::exec
