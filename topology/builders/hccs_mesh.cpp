// SPDX-License-Identifier: Apache-2.0
// kind: hccs_mesh (Ascend 910B servers). The devices of a node are fully meshed by direct
// point-to-point links, no switch. The scale_up bandwidth is per device (all its links
// together, as in the profile), so each of the devices_per_node - 1 peer links gets an equal
// share: 392 GB/s / 7 = 56 GB/s on an 8-NPU server. Nodes are joined by the scale-out tree.
#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "topology/builders/builder.h"

namespace tessera::topology {

namespace {

void mesh_node(ClusterGraph& g, const BuildInputs& in, int node, const hw::LinkSpec& per_link) {
  int first = node * in.devices_per_node;
  int last = std::min(first + in.devices_per_node, in.num_devices);
  for (int a = first; a < last; ++a) {
    for (int b = a + 1; b < last; ++b) {
      g.add_duplex(a, b, per_link, LinkClass::kScaleUp);
    }
  }
}

void build_hccs_mesh(ClusterGraph& g, const BuildInputs& in) {
  if (in.devices_per_node < 2) {
    throw base::InputError(in.spec.where, "kind 'hccs_mesh' needs at least 2 devices per node",
                           fmt::format("devices_per_node is {}", in.devices_per_node));
  }
  hw::LinkSpec per_link = in.scale_up;
  per_link.bandwidth /= in.devices_per_node - 1;
  for (int node = 0; node < in.num_nodes; ++node) {
    mesh_node(g, in, node, per_link);
  }
  if (in.num_nodes > 1) {
    add_scale_out_fabric(g, in);
  }
}

}  // namespace

void register_hccs_mesh(BuilderRegistry& registry) {
  registry.add("hccs_mesh", build_hccs_mesh);
}

}  // namespace tessera::topology
