// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing/route_symmetry.h"

#include <fmt/format.h>

#include <cstddef>

namespace tessera::exec {

RankPartition graph_partition(const graph::ExecGraph& graph) {
  return RankPartition{graph.class_of_rank, graph.class_rep};
}

std::string find_asymmetry(const RouteSignatures& sigs, const RankPartition& parts,
                           const GroupClasses& classes) {
  std::vector<RankSignature> rep_sig(parts.rep.size());
  for (std::size_t c = 0; c < parts.rep.size(); ++c) {
    rep_sig[c] = rank_signature(sigs, classes, parts.rep[c]);
  }
  const auto ranks = static_cast<std::int32_t>(parts.class_of_rank.size());
  for (std::int32_t r = 0; r < ranks; ++r) {
    auto c = static_cast<std::size_t>(parts.class_of_rank[static_cast<std::size_t>(r)]);
    if (parts.rep[c] != r && rank_signature(sigs, classes, r) != rep_sig[c]) {
      return fmt::format(
          "rank {} of rank class {} sees different routes than its representative, rank {}", r, c,
          parts.rep[c]);
    }
  }
  return "";
}

std::string find_asymmetry(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                           const GroupClasses& classes) {
  const RouteSignatures sigs(graph, cluster, classes);
  return find_asymmetry(sigs, graph_partition(graph), classes);
}

}  // namespace tessera::exec
