// SPDX-License-Identifier: Apache-2.0
// NVLS all-reduce (NVLink SHARP, NCCL_ALGO=NVLS): the scale-up switch reduces. Each member
// sends its buffer into the switch once and receives the reduced result once, so the links
// carry `bytes` per member in each direction whatever the group size (a ring carries
// 2(n-1)/n of it through every member). Flows: member i -> member i+1 through the switch,
// which loads every member's up and down link once; one step; Simple protocol only.
// Applies when the profile's switch reduces (collective.nvls), the group sits in one node
// behind a switch (nvswitch_fat_tree) and has at least nvls.min_members members (NCCL keeps
// rings below that: calibration/microbench/collectives.yaml stas-nvls-gain-vs-gpu-count).
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

class Nvls final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "nvls"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllReduce;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& ranks,
                             const topology::Cluster& cluster,
                             const hw::Profile& profile) const override {
    const hw::SwitchReduction& s = profile.collective.nvls;
    return s.enabled && cluster.kind() == "nvswitch_fat_tree" &&
           static_cast<int>(ranks.size()) >= s.min_members && within_one_node(ranks, cluster);
  }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& /*cluster*/,
                    std::vector<Flow>& out) const override {
    const std::size_t n = ranks.size();
    for (std::size_t i = 0; n > 1 && i < n; ++i) {
      out.push_back({ranks[i], ranks[(i + 1) % n]});
    }
  }

  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{1, bytes};
  }

  [[nodiscard]] base::SimTime latency(const hw::Profile& profile, Protocol /*p*/, int /*steps*/,
                                      base::SimTime hop_latency) const override {
    return profile.collective.nvls.latency + hop_latency;
  }

  [[nodiscard]] double bandwidth_fraction(const hw::Profile& profile,
                                          Protocol /*p*/) const override {
    return profile.collective.nvls.efficiency;
  }

  [[nodiscard]] int sms(const hw::Profile& profile) const override {
    return profile.collective.nvls.channels;
  }
};

}  // namespace

void register_nvls(CollectiveRegistry& registry) {
  registry.add(std::make_unique<Nvls>());
}

}  // namespace tessera::models
