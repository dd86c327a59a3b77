// SPDX-License-Identifier: Apache-2.0
#include "topology/cluster_graph.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace tessera::topology {

ClusterGraph::ClusterGraph(int num_devices) : graph_(0), num_devices_(num_devices) {
  for (int d = 0; d < num_devices; ++d) {
    add_vertex(VertexKind::kDevice, fmt::format("dev{}", d));
  }
}

std::int32_t ClusterGraph::add_vertex(VertexKind kind, std::string name) {
  auto v = static_cast<std::int32_t>(boost::add_vertex(graph_));
  vertices_.push_back(VertexInfo{kind, std::move(name)});
  return v;
}

LinkId ClusterGraph::add_link(std::int32_t from, std::int32_t to, const hw::LinkSpec& spec,
                              LinkClass cls) {
  auto id = static_cast<LinkId>(links_.size());
  links_.push_back(Link{from, to, spec.bandwidth, spec.latency, spec.efficiency, cls});
  boost::add_edge(static_cast<std::size_t>(from), static_cast<std::size_t>(to), id, graph_);
  return id;
}

void ClusterGraph::add_duplex(std::int32_t a, std::int32_t b, const hw::LinkSpec& spec,
                              LinkClass cls) {
  add_link(a, b, spec, cls);
  add_link(b, a, spec, cls);
}

const VertexInfo& ClusterGraph::vertex(std::int32_t v) const {
  if (v < 0 || v >= num_vertices()) {
    throw base::InternalError(fmt::format("vertex {} out of range [0, {})", v, num_vertices()));
  }
  return vertices_[static_cast<std::size_t>(v)];
}

int ClusterGraph::count(VertexKind kind) const {
  return static_cast<int>(std::count_if(vertices_.begin(), vertices_.end(),
                                        [kind](const VertexInfo& v) { return v.kind == kind; }));
}

}  // namespace tessera::topology
