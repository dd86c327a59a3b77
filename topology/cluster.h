// SPDX-License-Identifier: Apache-2.0
// The physical cluster: devices, switches and NICs as vertices of a Boost.Graph, directed
// links as edges (each with one-direction bandwidth, latency and achieved efficiency), and
// deterministic shortest-path routing with ECMP spreading over equal-cost paths.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/units.h"
#include "base/yaml_reader.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::topology {

using LinkId = std::int32_t;

enum class LinkClass : unsigned char { kScaleUp, kScaleOut, kFabric };
std::string_view link_class_name(LinkClass c);

struct Link {
  std::int32_t from = 0;  // vertex ids
  std::int32_t to = 0;
  double bandwidth = 0.0;     // bytes/s, this direction
  base::SimTime latency = 0;  // this hop
  double efficiency = 1.0;    // achieved fraction for collectives
  LinkClass cls = LinkClass::kScaleUp;
};

// What a scenario says about the network. Link fields left at 0 (bandwidth, latency or
// efficiency) come from the hardware profile's scale_up / scale_out link specs; fabric
// fields left at 0 come from the resolved scale_out spec.
struct TopologySpec {
  std::string kind = "nvswitch_fat_tree";  // nvswitch_fat_tree | hccs_mesh | ub_supernode
  std::string description;                 // free text from the preset or inline mapping
  int devices_per_node = 0;                // 0: the profile's value
  int nodes_per_leaf = 32;                 // scale-out: nodes under one leaf switch (per rail)
  bool rail_optimized = true;              // one leaf per rail (NIC index) per leaf group
  double oversubscription = 1.0;           // leaf downlink : uplink bandwidth
  int spines = 0;                          // spine switches; 0: one per uplink port, at most 8
  int supernode_size = 384;                // ub_supernode: chips per UB domain
  int max_nodes = 0;                       // 0: unlimited; single-node presets say 1
  int allocation_unit = 0;                 // devices a job is given at once; 0: whole nodes
  hw::LinkSpec scale_up{0.0, 0, 0.0};      // overrides (0 = from profile)
  hw::LinkSpec scale_out{0.0, 0, 0.0};
  hw::LinkSpec fabric{0.0, 0, 0.0};  // switch-to-switch links (0 = from scale_out)
  std::string source;                // preset name or file, for messages
  base::SourceLoc where;             // where errors about this topology are reported
};

// Reads an inline `topology:` mapping, a preset name from topology/presets/, or a path to a
// topology file (relative to the referring file's folder, then to the working directory).
TopologySpec parse_topology(const base::YamlNode& node);
// The file a `topology:` scalar names (a preset's or the path's); errors at `ref`.
std::string topology_file(const base::YamlNode& ref);
// The file of preset `name`; an unknown name is an error at `where` with the nearest names.
std::string preset_file(const std::string& name, const base::SourceLoc& where);
TopologySpec load_topology_preset(const std::string& name, const base::SourceLoc& where);
std::vector<std::string> preset_names();

// The devices of one node: the topology's devices_per_node, else the profile's.
int node_devices(const TopologySpec& spec, const hw::Profile& profile);

// The devices a job of `num_devices` uses in each node of `node_devices`: all of them when it
// fills whole nodes (or one node, or part of it); otherwise, where the topology allocates in
// smaller units (a GB200 NVL72 rack's trays of 4), the job spread evenly over the fewest
// nodes, in whole units (256 GPUs: 4 racks of 64). 0 when it cannot be placed so.
int job_devices_per_node(const TopologySpec& spec, int node_devices, std::int64_t num_devices);
std::vector<std::string> topology_kinds();  // the builder kinds, in registration order

enum class VertexKind : unsigned char { kDevice, kNodeSwitch, kLeaf, kSpine };
std::string_view vertex_kind_name(VertexKind k);

class Cluster {
 public:
  Cluster(const TopologySpec& spec, const hw::Profile& profile, int num_devices);
  ~Cluster();
  Cluster(Cluster&&) noexcept;
  Cluster& operator=(Cluster&&) noexcept;

  [[nodiscard]] int num_devices() const;
  [[nodiscard]] int devices_per_node() const;
  [[nodiscard]] int node_of(int device) const { return device / devices_per_node(); }
  [[nodiscard]] std::size_t num_links() const;
  [[nodiscard]] const Link& link(LinkId id) const;
  [[nodiscard]] std::string vertex_name(std::int32_t vertex) const;
  [[nodiscard]] VertexKind vertex_kind(std::int32_t vertex) const;
  [[nodiscard]] int num_vertices() const;
  [[nodiscard]] const std::string& kind() const;

  // The links from src to dst device, in order: a shortest-hop path that stays inside the
  // scale-up domain (node, HCCS server, UB supernode) when both ends share one, with
  // equal-cost choices spread by a fixed hash of (src, dst). Deterministic; cached (not
  // thread-safe). Devices (vertices 0..num_devices-1) never forward traffic. src == dst: {}.
  [[nodiscard]] const std::vector<LinkId>& route(int src, int dst) const;
  [[nodiscard]] base::SimTime path_latency(int src, int dst) const;
  [[nodiscard]] std::string describe() const;  // one line: kind, nodes, links

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::topology
