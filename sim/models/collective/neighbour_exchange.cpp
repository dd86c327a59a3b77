// SPDX-License-Identifier: Apache-2.0
// Send-recv (a ring shift) as one step of direct flows: each member sends its whole buffer to
// the next member of the group's order and receives from the previous one, all at once, as
// Transformer Engine's ring attention does with a batched isend/irecv between CP neighbours
// (formulas_moe_cp_zero.md §3.3). The order is the group's own, not a reordered ring: the
// neighbours are fixed by which CP rank holds which chunks.
#include <memory>

#include "sim/models/collective/algorithm.h"

namespace tessera::models {

namespace {

class NeighbourExchange final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "neighbour"; }
  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kSendRecv;
  }
  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }
  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& /*cluster*/,
                    std::vector<Flow>& out) const override {
    const std::size_t n = ranks.size();
    if (n < 2) {
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back({ranks[i], ranks[(i + 1) % n]});
    }
  }
  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{1, bytes};
  }
};

}  // namespace

void register_neighbour_exchange(CollectiveRegistry& registry) {
  registry.add(std::make_unique<NeighbourExchange>());
}

}  // namespace tessera::models
