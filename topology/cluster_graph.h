// SPDX-License-Identifier: Apache-2.0
// The cluster as a Boost.Graph: vertices are devices and switches, each edge is one directed
// link whose property is its LinkId into a flat table of Link records. Builders fill it;
// the router and Cluster read it.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "topology/cluster.h"

namespace tessera::topology {

// Bidirectional so the router can walk in-edges when it searches backwards from a target.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    boost::no_property, LinkId>;

struct VertexInfo {
  VertexKind kind = VertexKind::kDevice;
  std::string name;
};

class ClusterGraph {
 public:
  // Vertices 0..num_devices-1 are the devices, named dev<i>.
  explicit ClusterGraph(int num_devices);

  std::int32_t add_vertex(VertexKind kind, std::string name);
  LinkId add_link(std::int32_t from, std::int32_t to, const hw::LinkSpec& spec, LinkClass cls);
  void add_duplex(std::int32_t a, std::int32_t b, const hw::LinkSpec& spec, LinkClass cls);

  [[nodiscard]] const Graph& graph() const { return graph_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  [[nodiscard]] const VertexInfo& vertex(std::int32_t v) const;
  [[nodiscard]] int num_vertices() const { return static_cast<int>(vertices_.size()); }
  [[nodiscard]] int num_devices() const { return num_devices_; }
  [[nodiscard]] bool is_device(std::int32_t v) const { return v < num_devices_; }
  [[nodiscard]] int count(VertexKind kind) const;

 private:
  Graph graph_;
  std::vector<Link> links_;
  std::vector<VertexInfo> vertices_;
  int num_devices_ = 0;
};

}  // namespace tessera::topology
