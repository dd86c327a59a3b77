// SPDX-License-Identifier: Apache-2.0
// Cluster: picks the builder for spec.kind, builds the graph once, and answers queries.
#include "topology/cluster.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "topology/builders/builder.h"
#include "topology/cluster_graph.h"
#include "topology/routing/ecmp_router.h"

namespace tessera::topology {

std::string_view link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::kScaleUp:
      return "scale_up";
    case LinkClass::kScaleOut:
      return "scale_out";
    case LinkClass::kFabric:
      return "fabric";
  }
  return "?";
}

std::string_view vertex_kind_name(VertexKind k) {
  switch (k) {
    case VertexKind::kDevice:
      return "device";
    case VertexKind::kNodeSwitch:
      return "node switch";
    case VertexKind::kLeaf:
      return "leaf";
    case VertexKind::kSpine:
      return "spine";
  }
  return "?";
}

struct Cluster::Impl {
  Impl(std::string kind_name, int per_node, int num_devices)
      : kind(std::move(kind_name)), devices_per_node(per_node), graph(num_devices), router(graph) {}

  std::string kind;
  int devices_per_node;
  ClusterGraph graph;
  EcmpRouter router;  // refers to `graph`; Impl never moves (it lives behind a unique_ptr)
};

namespace {

BuildFn find_builder(const TopologySpec& spec) {
  BuildFn build = builtin_builders().find(spec.kind);
  if (build == nullptr) {
    throw base::InputError(spec.where, fmt::format("unknown topology kind '{}'", spec.kind),
                           fmt::format("expected one of: {}", fmt::join(topology_kinds(), ", ")));
  }
  return build;
}

}  // namespace

Cluster::Cluster(const TopologySpec& spec, const hw::Profile& profile, int num_devices) {
  BuildFn build = find_builder(spec);
  BuildInputs in = resolve_build_inputs(spec, profile, num_devices);
  impl_ = std::make_unique<Impl>(spec.kind, in.devices_per_node, num_devices);
  build(impl_->graph, in);  // built in place: the graph is never copied or moved
}

Cluster::~Cluster() = default;
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;

int Cluster::num_devices() const {
  return impl_->graph.num_devices();
}
int Cluster::devices_per_node() const {
  return impl_->devices_per_node;
}
std::size_t Cluster::num_links() const {
  return impl_->graph.links().size();
}
int Cluster::num_vertices() const {
  return impl_->graph.num_vertices();
}
const std::string& Cluster::kind() const {
  return impl_->kind;
}

const Link& Cluster::link(LinkId id) const {
  const auto& links = impl_->graph.links();
  if (id < 0 || static_cast<std::size_t>(id) >= links.size()) {
    throw base::InternalError(fmt::format("link {} out of range [0, {})", id, links.size()));
  }
  return links[static_cast<std::size_t>(id)];
}

std::string Cluster::vertex_name(std::int32_t vertex) const {
  return impl_->graph.vertex(vertex).name;
}

VertexKind Cluster::vertex_kind(std::int32_t vertex) const {
  return impl_->graph.vertex(vertex).kind;
}

const std::vector<LinkId>& Cluster::route(int src, int dst) const {
  return impl_->router.route(src, dst);
}

base::SimTime Cluster::path_latency(int src, int dst) const {
  base::SimTime total = 0;
  for (LinkId id : route(src, dst)) {
    total += link(id).latency;
  }
  return total;
}

std::string Cluster::describe() const {
  const ClusterGraph& g = impl_->graph;
  int nodes = (num_devices() + devices_per_node() - 1) / devices_per_node();
  std::string spines = "no spines";
  for (std::int32_t v = 0; v < g.num_vertices(); ++v) {
    if (g.vertex(v).kind == VertexKind::kSpine) {
      spines = g.vertex(v).name;  // "spines(xN)": N spines aggregated into one fluid layer
    }
  }
  return fmt::format(
      "{}: {} devices in {} node(s) of {}; {} node switches, {} leaves, {}; {} links", kind(),
      num_devices(), nodes, devices_per_node(), g.count(VertexKind::kNodeSwitch),
      g.count(VertexKind::kLeaf), spines, num_links());
}

}  // namespace tessera::topology
