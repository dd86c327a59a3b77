// SPDX-License-Identifier: Apache-2.0
#include <utility>

#include "base/error.h"
#include "sim/models/collective/algorithm.h"

namespace tessera::models {

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "LL";
    case Protocol::kLL128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}

hw::ProtocolSpec protocol_spec(const hw::Profile& profile, Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return profile.collective.ll;
    case Protocol::kLL128:
      return profile.collective.ll128;
    case Protocol::kSimple:
      break;
  }
  return {true, profile.collective_launch, profile.collective_step, 1.0};
}

base::SimTime CollectiveAlgorithm::latency(const hw::Profile& profile, Protocol p, int steps,
                                           base::SimTime hop_latency) const {
  const hw::ProtocolSpec spec = protocol_spec(profile, p);
  return spec.launch + steps * (spec.step + hop_latency);
}

void CollectiveRegistry::add(std::unique_ptr<CollectiveAlgorithm> algorithm) {
  entries_.push_back(std::move(algorithm));
}

const CollectiveAlgorithm* CollectiveRegistry::find(std::string_view name) const {
  for (const auto& a : entries_) {
    if (a->name() == name) {
      return a.get();
    }
  }
  return nullptr;
}

std::size_t CollectiveRegistry::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i]->name() == name) {
      return i;
    }
  }
  throw base::InternalError("no collective algorithm of that name is registered");
}

std::size_t CollectiveRegistry::select(graph::CollType c) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i]->runs(c)) {
      return i;
    }
  }
  throw base::InternalError("no collective algorithm runs this collective type");
}

std::vector<std::string_view> CollectiveRegistry::names() const {
  std::vector<std::string_view> out;
  out.reserve(entries_.size());
  for (const auto& a : entries_) {
    out.push_back(a->name());
  }
  return out;
}

// Adding an algorithm: one file with its class and register_<name>(), and one line here.
void register_builtin_collectives(CollectiveRegistry& registry) {
  register_ring(registry);
  register_chain_broadcast(registry);
  register_pairwise_all_to_all(registry);
  register_rail_ring(registry);
  register_nvls(registry);
  register_mesh_direct(registry);
  register_one_shot(registry);
  register_tree(registry);
  register_hierarchical(registry);
  register_rail_pairwise(registry);
  register_neighbour_exchange(registry);
  register_domain_dedup(registry);
}

const CollectiveRegistry& builtin_collectives() {
  static const CollectiveRegistry registry = [] {
    CollectiveRegistry r;
    register_builtin_collectives(r);
    return r;
  }();
  return registry;
}

}  // namespace tessera::models
