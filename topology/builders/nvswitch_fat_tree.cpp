// SPDX-License-Identifier: Apache-2.0
// kind: nvswitch_fat_tree (DGX/HGX H100 and A100). Each node's devices hang off one
// non-blocking NVSwitch vertex (an up and a down link per device at the scale_up bandwidth);
// nodes are joined by the shared scale-out fat tree. One node: no scale-out vertices.
#include <fmt/format.h>

#include <algorithm>

#include "topology/builders/builder.h"

namespace tessera::topology {

namespace {

void build_nvswitch_fat_tree(ClusterGraph& g, const BuildInputs& in) {
  for (int node = 0; node < in.num_nodes; ++node) {
    std::int32_t nvswitch =
        g.add_vertex(VertexKind::kNodeSwitch, fmt::format("node{}.nvswitch", node));
    int first = node * in.devices_per_node;
    int last = std::min(first + in.devices_per_node, in.num_devices);
    for (int d = first; d < last; ++d) {
      g.add_duplex(d, nvswitch, in.scale_up, LinkClass::kScaleUp);
    }
  }
  if (in.num_nodes > 1) {
    add_scale_out_fabric(g, in);
  }
}

}  // namespace

void register_nvswitch_fat_tree(BuilderRegistry& registry) {
  registry.add("nvswitch_fat_tree", build_nvswitch_fat_tree);
}

}  // namespace tessera::topology
