// SPDX-License-Identifier: Apache-2.0
// Broadcast as one pipelined chain ranks[0] -> ranks[1] -> ... -> ranks[n-1]: (n-1) steps,
// the whole payload over every flow.
#include <memory>

#include "sim/models/collective/algorithm.h"

namespace tessera::models {

namespace {

class ChainBroadcast final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "chain"; }
  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kBroadcast;
  }
  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }
  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& /*cluster*/,
                    std::vector<Flow>& out) const override {
    for (std::size_t i = 0; i + 1 < ranks.size(); ++i) {
      out.push_back({ranks[i], ranks[i + 1]});
    }
  }
  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{n - 1, bytes};
  }
};

}  // namespace

void register_chain_broadcast(CollectiveRegistry& registry) {
  registry.add(std::make_unique<ChainBroadcast>());
}

}  // namespace tessera::models
