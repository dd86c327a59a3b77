// SPDX-License-Identifier: Apache-2.0
// The scale-out network shared by all builders: a two-level fat tree. Every device has its
// own NIC link to a leaf; with rail optimization there is one leaf per (rail = local device
// index, group of nodes_per_leaf nodes), otherwise one leaf per group. Each leaf's uplink
// capacity is its designed downlink capacity / oversubscription. The spine layer is one
// aggregated vertex: ECMP spreads flows over the spines, and we model the spread as perfectly
// even (a fluid), not as one hash-chosen spine per flow. A per-flow hash would make two
// otherwise identical ranks see different collisions, which is arbitrary (it depends on the
// hash) and would stop ranks from sharing one simulated instance.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "topology/builders/builder.h"

namespace tessera::topology {

namespace {

constexpr int kMaxAutoSpines = 8;

struct FabricShape {
  int rails = 1;
  int groups = 1;
  int spines = 0;
  hw::LinkSpec uplink;  // one leaf-spine link, one direction
};

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

FabricShape shape_of(const BuildInputs& in) {
  const TopologySpec& spec = in.spec;
  FabricShape f;
  f.rails = spec.rail_optimized ? in.devices_per_node : 1;
  f.groups = ceil_div(in.num_nodes, spec.nodes_per_leaf);
  int downlinks = spec.nodes_per_leaf * (spec.rail_optimized ? 1 : in.devices_per_node);
  double up = downlinks * in.scale_out.bandwidth / spec.oversubscription;
  int ports = std::max(1, static_cast<int>(std::ceil(up / in.fabric.bandwidth)));
  f.spines = spec.spines > 0 ? spec.spines : std::min(ports, kMaxAutoSpines);
  f.uplink = in.fabric;
  f.uplink.bandwidth = up / f.spines;
  return f;
}

std::vector<std::int32_t> add_leaves(ClusterGraph& g, const FabricShape& f) {
  std::vector<std::int32_t> leaves;
  for (int group = 0; group < f.groups; ++group) {
    for (int rail = 0; rail < f.rails; ++rail) {
      leaves.push_back(g.add_vertex(VertexKind::kLeaf, fmt::format("leaf.g{}.r{}", group, rail)));
    }
  }
  return leaves;
}

void add_nic_links(ClusterGraph& g, const BuildInputs& in, const FabricShape& f,
                   const std::vector<std::int32_t>& leaves) {
  for (int d = 0; d < in.num_devices; ++d) {
    int node = d / in.devices_per_node;
    int rail = in.spec.rail_optimized ? d % in.devices_per_node : 0;
    int leaf_index = (node / in.spec.nodes_per_leaf) * f.rails + rail;
    std::int32_t leaf = leaves[static_cast<std::size_t>(leaf_index)];
    g.add_duplex(d, leaf, in.scale_out, LinkClass::kScaleOut);
  }
}

void add_spines(ClusterGraph& g, const FabricShape& f, const std::vector<std::int32_t>& leaves) {
  std::int32_t spine = g.add_vertex(VertexKind::kSpine, fmt::format("spines(x{})", f.spines));
  hw::LinkSpec up = f.uplink;
  up.bandwidth *= f.spines;  // a leaf's uplinks to all spines, as one fluid link
  for (std::int32_t leaf : leaves) {
    g.add_duplex(leaf, spine, up, LinkClass::kFabric);
  }
}

}  // namespace

void add_scale_out_fabric(ClusterGraph& g, const BuildInputs& in) {
  FabricShape f = shape_of(in);
  std::vector<std::int32_t> leaves = add_leaves(g, f);
  add_nic_links(g, in, f, leaves);
  if (leaves.size() > 1) {
    add_spines(g, f, leaves);
  }
}

}  // namespace tessera::topology
