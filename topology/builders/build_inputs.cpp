// SPDX-License-Identifier: Apache-2.0
// Checks a TopologySpec against the requested device count (also for specs built in code,
// which never went through the YAML reader) and resolves every link field that was left at
// 0 from the hardware profile.
#include <fmt/format.h>

#include "base/error.h"
#include "topology/builders/builder.h"

namespace tessera::topology {

namespace {

[[noreturn]] void fail(const TopologySpec& spec, const std::string& message,
                       const std::string& hint = "") {
  throw base::InputError(spec.where, message, hint);
}

void check_link(const TopologySpec& spec, const hw::LinkSpec& link, std::string_view name) {
  if (link.bandwidth < 0.0 || link.latency < 0 || link.efficiency < 0.0 || link.efficiency > 1.0) {
    fail(spec, fmt::format("{} link: negative bandwidth or latency, or efficiency outside "
                           "(0, 1]",
                           name));
  }
}

void check_spec(const TopologySpec& spec) {
  if (spec.devices_per_node < 0 || spec.nodes_per_leaf < 1 || spec.spines < 0 ||
      spec.supernode_size < 1 || spec.max_nodes < 0 || spec.allocation_unit < 0 ||
      !(spec.oversubscription >= 1.0)) {
    fail(spec,
         "invalid topology counts: need devices_per_node >= 0, nodes_per_leaf >= 1, "
         "spines >= 0, supernode_size >= 1, max_nodes >= 0, allocation_unit >= 0 and "
         "oversubscription >= 1");
  }
  check_link(spec, spec.scale_up, "scale_up");
  check_link(spec, spec.scale_out, "scale_out");
  check_link(spec, spec.fabric, "fabric");
}

int count_nodes(const TopologySpec& spec, int num_devices, int per_node) {
  if (num_devices < 1) {
    fail(spec, fmt::format("a cluster needs at least one device, got {}", num_devices));
  }
  if (num_devices > per_node && num_devices % per_node != 0) {
    fail(spec,
         fmt::format("num_devices ({}) is not a multiple of devices_per_node ({})", num_devices,
                     per_node),
         "multi-node clusters are made of whole nodes");
  }
  const int nodes = (num_devices + per_node - 1) / per_node;
  if (spec.max_nodes > 0 && nodes > spec.max_nodes) {
    fail(spec, fmt::format("topology '{}' holds at most {} node(s) of {} devices; {} devices "
                           "requested",
                           spec.source, spec.max_nodes, per_node, num_devices));
  }
  return nodes;
}

hw::LinkSpec inherit(const hw::LinkSpec& given, const hw::LinkSpec& fallback) {
  hw::LinkSpec out = fallback;
  if (given.bandwidth > 0.0) {
    out.bandwidth = given.bandwidth;
  }
  if (given.latency > 0) {
    out.latency = given.latency;
  }
  if (given.efficiency > 0.0) {
    out.efficiency = given.efficiency;
  }
  return out;
}

}  // namespace

int node_devices(const TopologySpec& spec, const hw::Profile& profile) {
  return spec.devices_per_node > 0 ? spec.devices_per_node : profile.devices_per_node;
}

int job_devices_per_node(const TopologySpec& spec, int node_devices, std::int64_t num_devices) {
  if (node_devices < 1 || num_devices <= node_devices || num_devices % node_devices == 0) {
    return node_devices;
  }
  const int unit = spec.allocation_unit;
  if (unit < 1 || unit >= node_devices) {
    return 0;
  }
  const std::int64_t nodes = (num_devices + node_devices - 1) / node_devices;
  const std::int64_t per_node = num_devices / nodes;
  return num_devices % nodes == 0 && per_node % unit == 0 ? static_cast<int>(per_node) : 0;
}

BuildInputs resolve_build_inputs(const TopologySpec& spec, const hw::Profile& profile,
                                 int num_devices) {
  check_spec(spec);
  BuildInputs in{spec};
  in.num_devices = num_devices;
  const int node = node_devices(spec, profile);
  const int used = job_devices_per_node(spec, node, num_devices);
  in.devices_per_node = used > 0 ? used : node;
  in.num_nodes = count_nodes(spec, num_devices, in.devices_per_node);
  in.scale_up = inherit(spec.scale_up, profile.scale_up);
  in.scale_out = inherit(spec.scale_out, profile.scale_out);
  in.fabric = inherit(spec.fabric, in.scale_out);
  return in;
}

}  // namespace tessera::topology
