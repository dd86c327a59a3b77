// SPDX-License-Identifier: Apache-2.0
// All-to-all as direct flows between every ordered pair of members at once: one step,
// bytes / n per flow.
#include <memory>

#include "sim/models/collective/algorithm.h"

namespace tessera::models {

namespace {

class PairwiseAllToAll final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "pairwise"; }
  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllToAll;
  }
  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }
  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& /*cluster*/,
                    std::vector<Flow>& out) const override {
    if (ranks.size() < 2) {
      return;
    }
    for (std::int32_t s : ranks) {
      for (std::int32_t d : ranks) {
        if (s != d) {
          out.push_back({s, d});
        }
      }
    }
  }
  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{1, bytes / static_cast<double>(n)};
  }
};

}  // namespace

void register_pairwise_all_to_all(CollectiveRegistry& registry) {
  registry.add(std::make_unique<PairwiseAllToAll>());
}

}  // namespace tessera::models
