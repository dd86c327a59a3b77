// SPDX-License-Identifier: Apache-2.0
// Hierarchical collectives across full-mesh servers, as HCCL runs them on Ascend clusters
// (CANN docs, HCCL_ALGO: a "level0" algorithm inside each server, a "level1" algorithm
// between servers): inside a server the members are directly meshed (mesh_direct.cpp); between
// servers the members with the same local index form one ring per index, on their own NIC.
// With k members on each of m servers and payload S:
//   all-reduce      reduce-scatter in each server (mesh, S), all-reduce across servers
//                   (ring, S / k), all-gather in each server (mesh, S)
//   reduce-scatter  reduce-scatter in each server (mesh, S), reduce-scatter across (S / k)
//   all-gather      all-gather across servers (S / k), all-gather in each server (mesh, S)
// one stage after another. Each member's NIC carries 2(m-1)/m x S/k for all-reduce, what a
// rail-aligned flat ring also carries, but the server stages do not overlap the NIC stage,
// and the steps are 2 + 2(m-1) instead of 2(km-1). HCCL's other level-1 algorithms
// (recursive halving-doubling, NHR, NB: logarithmic steps, same bytes) and its "pipeline"
// variant (stages overlapped) are not modelled; the rail-aligned ring stands for the
// overlapped one. Applies to all-reduce, reduce-scatter and all-gather over two or more
// servers with the same k >= 2 members on each, joined pairwise by direct links inside a
// server; HCCL moves data with Simple transfers only.
#include <algorithm>
#include <memory>

#include "base/error.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

// The c-th member of every server, for c in [0, k).
std::vector<std::vector<std::int32_t>> rails(const std::vector<std::vector<std::int32_t>>& nodes) {
  std::vector<std::vector<std::int32_t>> out(nodes.front().size());
  for (const auto& members : nodes) {
    for (std::size_t c = 0; c < members.size(); ++c) {
      out[c].push_back(members[c]);
    }
  }
  return out;
}

class Hierarchical final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "hierarchical"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce || c == graph::CollType::kAllGather ||
           c == graph::CollType::kReduceScatter;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& profile) const override {
    const auto nodes = members_by_node(ranks, cluster);
    if (nodes.size() < 2 || nodes.front().size() < 2) {
      return false;
    }
    const CollectiveAlgorithm& mesh = *builtin_collectives().find("mesh");
    const std::size_t k = nodes.front().size();
    return std::all_of(nodes.begin(), nodes.end(), [&](const auto& members) {
      return members.size() == k && mesh.applies(members, cluster, profile);
    });
  }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    const CollectiveRegistry& r = builtin_collectives();
    for (const Stage& s : stages(graph::CollType::kAllReduce, ranks, cluster)) {
      if (s.type == graph::CollType::kAllGather) {
        continue;  // the same flows as the first stage
      }
      for (const auto& sub : s.subgroups) {
        r.at(s.algorithm).append_flows(sub, cluster, out);
      }
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int /*n*/, int /*channels*/,
                                    double /*bytes*/) const override {
    throw base::InternalError("the hierarchical collective is timed stage by stage");
  }

  [[nodiscard]] std::vector<Stage> stages(graph::CollType c, const std::vector<std::int32_t>& ranks,
                                          const topology::Cluster& cluster) const override {
    const CollectiveRegistry& r = builtin_collectives();
    const auto nodes = members_by_node(ranks, cluster);
    const double share = 1.0 / static_cast<double>(nodes.front().size());
    const Stage inside_rs{r.index_of("mesh"), graph::CollType::kReduceScatter, nodes, 1.0};
    const Stage inside_ag{r.index_of("mesh"), graph::CollType::kAllGather, nodes, 1.0};
    const Stage across{r.index_of("ring"), c, rails(nodes), share};
    switch (c) {
      case graph::CollType::kAllReduce:
        return {inside_rs, across, inside_ag};
      case graph::CollType::kReduceScatter:
        return {inside_rs, across};
      case graph::CollType::kAllGather:
        return {across, inside_ag};
      default:
        throw base::InternalError("the hierarchical collective does not run this type");
    }
  }
};

}  // namespace

void register_hierarchical(CollectiveRegistry& registry) {
  registry.add(std::make_unique<Hierarchical>());
}

}  // namespace tessera::models
