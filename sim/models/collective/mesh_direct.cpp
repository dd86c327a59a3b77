// SPDX-License-Identifier: Apache-2.0
// Direct (mesh) collectives, as HCCL runs them inside an HCCS full-mesh server (Ascend
// 910B/910C): every member exchanges its 1/n share with every other member at once, each
// pair over its own link. All-reduce is a reduce-scatter then an all-gather:
//   all-reduce              2 steps, 2 * bytes / n per flow
//   all-gather / r-scatter  1 step,      bytes / n per flow
// over n(n-1) flows, so every one of the mesh's directed links carries load (a ring would
// use n of them). Applies when every pair of members is joined by one direct link.
#include <memory>

#include "sim/models/collective/algorithm.h"

namespace tessera::models {

namespace {

class MeshDirect final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "mesh"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce || c == graph::CollType::kAllGather ||
           c == graph::CollType::kReduceScatter;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& /*profile*/) const override {
    for (std::int32_t a : ranks) {
      for (std::int32_t b : ranks) {
        if (a != b && cluster.route(a, b).size() != 1) {
          return false;
        }
      }
    }
    return ranks.size() > 1;
  }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& /*cluster*/,
                    std::vector<Flow>& out) const override {
    for (std::int32_t s : ranks) {
      for (std::int32_t d : ranks) {
        if (s != d) {
          out.push_back({s, d});
        }
      }
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType c, int n, int /*channels*/,
                                    double bytes) const override {
    if (n <= 1) {
      return {};
    }
    const double share = bytes / static_cast<double>(n);
    return c == graph::CollType::kAllReduce ? CollectiveCost{2, 2.0 * share}
                                            : CollectiveCost{1, share};
  }
};

}  // namespace

void register_mesh_direct(CollectiveRegistry& registry) {
  registry.add(std::make_unique<MeshDirect>());
}

}  // namespace tessera::models
