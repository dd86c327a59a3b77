// SPDX-License-Identifier: Apache-2.0
// One-shot all-reduce for small messages (TensorRT-LLM's and vLLM's one-shot custom
// all-reduce): every member sends its whole buffer to every other member in a single step and
// reduces locally. Fewest steps, most bytes: 1 step, `bytes` per flow over n(n-1) flows, so
// each member sends (n-1) x bytes where a ring sends 2(n-1)/n x bytes. The local reduction
// of the n buffers into the output comes after the exchange: n reads and a write of `bytes`
// per member while the links idle (CollectiveCost::local_traffic), where a ring's last step
// moves 2 x bytes / n.
// Applies inside one node (scale-up links only); LL or Simple. The tuner takes it only where
// its one step beats the ring's 2(n-1) (small messages). NCCL's own all-gather has no
// one-shot variant.
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

class OneShot final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "one_shot"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& /*profile*/) const override {
    return ranks.size() > 1 && within_one_node(ranks, cluster);
  }

  [[nodiscard]] bool uses(Protocol p) const override { return p != Protocol::kLL128; }

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

  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{1, bytes, (n + 1.0) * bytes};
  }
};

}  // namespace

void register_one_shot(CollectiveRegistry& registry) {
  registry.add(std::make_unique<OneShot>());
}

}  // namespace tessera::models
