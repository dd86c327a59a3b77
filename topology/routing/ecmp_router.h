// SPDX-License-Identifier: Apache-2.0
// Deterministic shortest-hop routing with ECMP: a backwards breadth-first search from the
// target gives every vertex its hop distance; the route then walks forward from the source,
// choosing among equal-cost next links by a fixed hash of (src, dst, hop).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "topology/cluster_graph.h"

namespace tessera::topology {

// Contract: routes between devices only; devices other than the endpoints never forward.
// When a scale-up-only path exists (same node, HCCS server or UB supernode) the route uses
// scale-up links only. Routes and whole-graph searches are cached, so the router is not
// thread-safe. The graph must outlive the router and be complete before the first route.
class EcmpRouter {
 public:
  explicit EcmpRouter(const ClusterGraph& graph) : graph_(graph) {}

  [[nodiscard]] const std::vector<LinkId>& route(int src, int dst) const;

 private:
  using Distances = std::vector<std::int8_t>;  // hops to the target; -1: unreachable

  void search_back_from(int dst, bool scale_up_only, Distances& dist,
                        std::vector<std::int32_t>& reached) const;
  // Over scale-up links only: small (one domain), so searched each time into a scratch
  // buffer; the reference is valid until the next call.
  [[nodiscard]] const Distances& scale_up_distances_to(int dst) const;
  [[nodiscard]] const Distances& distances_to(int dst) const;  // whole graph, cached
  [[nodiscard]] std::vector<LinkId> walk(int src, int dst, const Distances& dist,
                                         bool scale_up_only) const;
  [[nodiscard]] bool usable(LinkId id, bool scale_up_only) const;
  void check_device(int device) const;

  const ClusterGraph& graph_;
  mutable std::unordered_map<int, Distances> distances_;  // one byte per vertex per target
  mutable Distances scratch_;
  mutable std::vector<std::int32_t> scratch_reached_;
  mutable std::unordered_map<std::uint64_t, std::vector<LinkId>> routes_;
};

}  // namespace tessera::topology
