// SPDX-License-Identifier: Apache-2.0
// Topology builders: one function per `kind`, each in its own file, registered explicitly by
// name (no static-initialiser registration).
// Contract: a builder receives a ClusterGraph that already holds the devices (vertices
// 0..num_devices-1) and adds switches and links; every link it adds carries resolved
// bandwidth, latency and efficiency. Kind-specific input errors throw base::InputError at
// spec.where.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "topology/cluster.h"
#include "topology/cluster_graph.h"

namespace tessera::topology {

// A validated spec with every link field resolved against the hardware profile.
struct BuildInputs {
  explicit BuildInputs(const TopologySpec& given) : spec(given) {}

  const TopologySpec& spec;
  int num_devices = 0;
  int devices_per_node = 0;
  int num_nodes = 0;
  hw::LinkSpec scale_up;   // per device, one direction
  hw::LinkSpec scale_out;  // per device NIC, one direction
  hw::LinkSpec fabric;     // switch-to-switch port speed, latency, efficiency
};

// Validates `spec` against the device count and fills the link specs from `profile`.
BuildInputs resolve_build_inputs(const TopologySpec& spec, const hw::Profile& profile,
                                 int num_devices);

using BuildFn = void (*)(ClusterGraph&, const BuildInputs&);

class BuilderRegistry {
 public:
  void add(std::string_view kind, BuildFn fn);
  [[nodiscard]] BuildFn find(std::string_view kind) const;  // nullptr when unknown
  [[nodiscard]] std::vector<std::string_view> kinds() const;

 private:
  std::vector<std::pair<std::string_view, BuildFn>> entries_;
};

// The built-in builders, registered once by register_builtin_builders().
const BuilderRegistry& builtin_builders();
void register_builtin_builders(BuilderRegistry& registry);
void register_nvswitch_fat_tree(BuilderRegistry& registry);
void register_hccs_mesh(BuilderRegistry& registry);
void register_ub_supernode(BuilderRegistry& registry);

// Shared by the builders: NIC links from every device to a leaf switch and leaf-to-spine
// links (a two-level fat tree, rail-optimized or not). Call only for multi-node clusters.
void add_scale_out_fabric(ClusterGraph& g, const BuildInputs& in);

}  // namespace tessera::topology
