// SPDX-License-Identifier: Apache-2.0
// kind: ub_supernode (Ascend 910C CloudMatrix384). Up to supernode_size chips share one
// Unified Bus domain, modelled as a single non-blocking switch (each chip's up and down
// link at the scale_up bandwidth). Several supernodes are joined by the RoCE fat tree that
// every chip's NIC attaches to; a single supernode has no scale-out vertices.
#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "topology/builders/builder.h"

namespace tessera::topology {

namespace {

void check_supernode_size(const BuildInputs& in) {
  if (in.spec.supernode_size % in.devices_per_node != 0) {
    throw base::InputError(
        in.spec.where,
        fmt::format("supernode_size ({}) is not a multiple of devices_per_node ({})",
                    in.spec.supernode_size, in.devices_per_node),
        "a supernode holds whole nodes");
  }
}

void build_ub_supernode(ClusterGraph& g, const BuildInputs& in) {
  check_supernode_size(in);
  int size = in.spec.supernode_size;
  int supernodes = (in.num_devices + size - 1) / size;
  for (int s = 0; s < supernodes; ++s) {
    std::int32_t ub = g.add_vertex(VertexKind::kNodeSwitch, fmt::format("supernode{}.ub", s));
    int last = std::min((s + 1) * size, in.num_devices);
    for (int d = s * size; d < last; ++d) {
      g.add_duplex(d, ub, in.scale_up, LinkClass::kScaleUp);
    }
  }
  if (supernodes > 1) {
    add_scale_out_fabric(g, in);
  }
}

}  // namespace

void register_ub_supernode(BuilderRegistry& registry) {
  registry.add("ub_supernode", build_ub_supernode);
}

}  // namespace tessera::topology
