// SPDX-License-Identifier: Apache-2.0
// Node-deduplicated token dispatch (DeepEP's and HybridEP's normal kernels, deepseek-ai/DeepEP
// README; Megatron-Core's flex dispatcher; docs/moe.md): a member sends each token over the
// scale-out network once to every other scale-up domain of the group that holds one of its
// experts, to the member there on its own rail (the same local index; failing that, the one
// at its own place among its domain's members), which forwards it over the domain's NVLink.
// The combine runs the other way, summed within the domain first. One flow per member and
// other domain; the group's domain_share (graph::Group, from the routing: synth/build/
// dispatch_share.cpp) of the payload on each. The NVLink legs run inside the same kernels,
// pipelined with the transfers between domains on links several times a NIC's bandwidth, and
// are not timed (DeepEP's own figures put the bottleneck on RDMA). The group chooses it, not
// the tuner: applies() is false, and CommPaths picks it for a group with a domain share.
#include <memory>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/ring_order.h"

namespace tessera::models {

namespace {

// The member of `domain` that receives from the member at `place` in its own domain, whose
// device is `src`: the one on src's rail, else the one at the same place (wrapped).
std::int32_t receiver(const std::vector<std::int32_t>& domain, std::size_t place, std::int32_t src,
                      const topology::Cluster& cluster) {
  const int per = cluster.devices_per_node();
  for (std::int32_t d : domain) {
    if (d % per == src % per) {
      return d;
    }
  }
  return domain[place % domain.size()];
}

class DomainDedup final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "deepep"; }

  [[nodiscard]] bool runs(graph::CollType c) const override {
    return c == graph::CollType::kAllToAll;
  }

  [[nodiscard]] bool applies(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/,
                             const hw::Profile& /*profile*/) const override {
    return false;
  }

  [[nodiscard]] int channels(const std::vector<std::int32_t>& /*ranks*/,
                             const topology::Cluster& /*cluster*/) const override {
    return 1;
  }

  void append_flows(const std::vector<std::int32_t>& ranks, const topology::Cluster& cluster,
                    std::vector<Flow>& out) const override {
    const auto domains = members_by_node(ranks, cluster);
    for (const auto& own : domains) {
      for (std::size_t place = 0; place < own.size(); ++place) {
        for (const auto& other : domains) {
          if (&other != &own) {
            out.push_back({own[place], receiver(other, place, own[place], cluster)});
          }
        }
      }
    }
  }

  // DeepEP's normal kernels run on 20 SMs (deep_ep/buffer.py Buffer.num_sms; Megatron-Core's
  // --moe-deepep-num-sms default), which a concurrent GEMM loses.
  [[nodiscard]] int sms(const hw::Profile& /*profile*/) const override { return 20; }

  // `bytes`: what a member sends to each other domain (the payload times the group's share).
  [[nodiscard]] CollectiveCost cost(graph::CollType /*c*/, int n, int /*channels*/,
                                    double bytes) const override {
    return n <= 1 ? CollectiveCost{} : CollectiveCost{1, bytes};
  }
};

}  // namespace

void register_domain_dedup(CollectiveRegistry& registry) {
  registry.add(std::make_unique<DomainDedup>());
}

}  // namespace tessera::models
