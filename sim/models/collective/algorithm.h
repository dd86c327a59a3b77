// SPDX-License-Identifier: Apache-2.0
// The collective-algorithm role: how a collective of one group becomes point-to-point flows
// on the network, how many bytes each flow carries, how many synchronised steps it takes and
// which library protocols it runs with. One implementation per file (ring.cpp,
// rail_ring.cpp, nvls.cpp, mesh_direct.cpp, one_shot.cpp, tree.cpp, chain_broadcast.cpp,
// pairwise_all_to_all.cpp, hierarchical.cpp, rail_pairwise.cpp, neighbour_exchange.cpp,
// domain_dedup.cpp),
// registered explicitly in registry.cpp; the tuner (tuner.h) chooses among those that apply.
// A staged algorithm (hierarchical.cpp) runs other algorithms one after another on
// subgroups: it lists them as Stages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "topology/cluster.h"

namespace tessera::models {

struct Flow {
  std::int32_t src = 0;
  std::int32_t dst = 0;
};

// What one collective costs: latency-bound steps, bytes per flow, and the HBM bytes (read +
// written) each member moves in local steps that send nothing, so that no link is busy
// while they run (the ring's last step per loop; one-shot's final reduction; timed at the
// profile's streaming HBM rate; 0 for the other algorithms).
struct CollectiveCost {
  int steps = 0;
  double bytes_per_flow = 0.0;
  double local_traffic = 0.0;
};

// One stage of a staged collective: the single-stage algorithm `algorithm` (index in
// builtin_collectives()) runs a `type` collective on every subgroup at once, over
// `bytes_fraction` of the collective's payload; the next stage starts when it ends.
struct Stage {
  std::size_t algorithm = 0;
  graph::CollType type = graph::CollType::kAllReduce;
  std::vector<std::vector<std::int32_t>> subgroups;
  double bytes_fraction = 1.0;
};

// NCCL's protocols. HCCL's transfers are timed as Simple.
enum class Protocol : unsigned char { kLL, kLL128, kSimple };
inline constexpr int kNumProtocols = 3;
std::string_view protocol_name(Protocol p);
// The profile's spec of `p`; Simple is the profile's collective launch and step at full
// bandwidth, always enabled.
hw::ProtocolSpec protocol_spec(const hw::Profile& profile, Protocol p);

// Contract: for a group `ranks` (in the group's order) on `cluster`, applies() says whether
// the algorithm can run it there (topology and profile facts); append_flows() adds the flows
// the algorithm puts on the network at once (none for fewer than two members); channels()
// is how many parallel copies of the pattern those flows hold (>= 1), and cost() the steps
// and bytes per flow for `n` members, the NCCL-convention payload `bytes`
// (graph::Node::bytes) and that many channels; a group of one costs nothing. latency() is
// the fixed part of one call with protocol `p` given the cost's steps and the slowest hop's
// wire latency, bandwidth_fraction() what `p` keeps of the links' bandwidth, and sms() the
// SMs (CTAs, one per NCCL channel) the collective's kernel occupies while it runs. stages()
// is empty for a single-stage algorithm; a staged one lists its stages for a `c` collective
// on `ranks`, is timed stage by stage (the call's launch counted once), and its
// append_flows() adds every stage's flows. All are deterministic.
class CollectiveAlgorithm {
 public:
  CollectiveAlgorithm() = default;
  CollectiveAlgorithm(const CollectiveAlgorithm&) = delete;
  CollectiveAlgorithm& operator=(const CollectiveAlgorithm&) = delete;
  CollectiveAlgorithm(CollectiveAlgorithm&&) = delete;
  CollectiveAlgorithm& operator=(CollectiveAlgorithm&&) = delete;
  virtual ~CollectiveAlgorithm() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual bool runs(graph::CollType c) const = 0;
  [[nodiscard]] virtual bool applies(const std::vector<std::int32_t>& /*ranks*/,
                                     const topology::Cluster& /*cluster*/,
                                     const hw::Profile& /*profile*/) const {
    return true;
  }
  [[nodiscard]] virtual bool uses(Protocol p) const { return p == Protocol::kSimple; }
  [[nodiscard]] virtual int channels(const std::vector<std::int32_t>& ranks,
                                     const topology::Cluster& cluster) const = 0;
  virtual void append_flows(const std::vector<std::int32_t>& ranks,
                            const topology::Cluster& cluster, std::vector<Flow>& out) const = 0;
  [[nodiscard]] virtual CollectiveCost cost(graph::CollType c, int n, int channels,
                                            double bytes) const = 0;
  [[nodiscard]] virtual base::SimTime latency(const hw::Profile& profile, Protocol p, int steps,
                                              base::SimTime hop_latency) const;
  [[nodiscard]] virtual double bandwidth_fraction(const hw::Profile& profile, Protocol p) const {
    return protocol_spec(profile, p).bandwidth;
  }
  [[nodiscard]] virtual int sms(const hw::Profile& profile) const {
    return profile.collective.channels;
  }
  [[nodiscard]] virtual std::vector<Stage> stages(graph::CollType /*c*/,
                                                  const std::vector<std::int32_t>& /*ranks*/,
                                                  const topology::Cluster& /*cluster*/) const {
    return {};
  }
};

// The algorithms by name, in registration order; select() picks, for a collective type, the
// first registered algorithm that runs it (the rings-only default the tuner falls back to).
class CollectiveRegistry {
 public:
  void add(std::unique_ptr<CollectiveAlgorithm> algorithm);
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] const CollectiveAlgorithm& at(std::size_t index) const { return *entries_[index]; }
  [[nodiscard]] const CollectiveAlgorithm* find(std::string_view name) const;  // nullptr: none
  [[nodiscard]] std::size_t index_of(std::string_view name) const;  // InternalError when none
  [[nodiscard]] std::size_t select(graph::CollType c) const;  // InternalError when none runs c
  [[nodiscard]] std::vector<std::string_view> names() const;

 private:
  std::vector<std::unique_ptr<CollectiveAlgorithm>> entries_;
};

// The built-in algorithms, registered once by register_builtin_collectives().
const CollectiveRegistry& builtin_collectives();
void register_builtin_collectives(CollectiveRegistry& registry);
void register_ring(CollectiveRegistry& registry);
void register_chain_broadcast(CollectiveRegistry& registry);
void register_pairwise_all_to_all(CollectiveRegistry& registry);
void register_rail_ring(CollectiveRegistry& registry);
void register_nvls(CollectiveRegistry& registry);
void register_mesh_direct(CollectiveRegistry& registry);
void register_one_shot(CollectiveRegistry& registry);
void register_tree(CollectiveRegistry& registry);
void register_hierarchical(CollectiveRegistry& registry);
void register_rail_pairwise(CollectiveRegistry& registry);
void register_neighbour_exchange(CollectiveRegistry& registry);
void register_domain_dedup(CollectiveRegistry& registry);

}  // namespace tessera::models
