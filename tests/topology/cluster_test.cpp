// SPDX-License-Identifier: Apache-2.0
#include "topology/cluster.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "tests/input_error.h"

namespace tessera::topology {
namespace {

using base::YamlNode;

using testing::error_of;

const hw::Profile& profile(const std::string& name) {
  static std::map<std::string, hw::Profile> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, hw::load_profile(name)).first;
  }
  return it->second;
}

TopologySpec parse(const std::string& text) {
  return parse_topology(YamlNode::load_string(text, "t.yaml").at("topology"));
}

Cluster preset(const std::string& name, const std::string& part, int devices) {
  return Cluster(load_topology_preset(name, {}), profile(part), devices);
}

TEST(Cluster, EveryPresetBuildsWithItsProfile) {
  struct Case {
    const char* preset;
    const char* part;
    int devices;
  };
  for (const Case& c :
       {Case{"dgx-h100-superpod", "h100-sxm", 256}, Case{"dgx-a100-superpod", "a100-sxm-80gb", 160},
        Case{"ascend-910b-cluster", "ascend-910b", 64}, Case{"cloudmatrix384", "ascend-910c", 768},
        Case{"single-node", "h100-sxm", 8}, Case{"gb200-nvl72", "gb200", 144}}) {
    SCOPED_TRACE(c.preset);
    Cluster cluster = preset(c.preset, c.part, c.devices);
    EXPECT_EQ(cluster.num_devices(), c.devices);
    EXPECT_EQ(cluster.devices_per_node(), std::string(c.preset) == "gb200-nvl72" ? 72 : 8);
    EXPECT_FALSE(cluster.route(0, c.devices - 1).empty());
  }
}

TEST(Cluster, OneNodeHasNoScaleOutVertices) {
  Cluster one = preset("dgx-h100-superpod", "h100-sxm", 8);
  EXPECT_EQ(one.describe(),
            "nvswitch_fat_tree: 8 devices in 1 node(s) of 8; 1 node switches, 0 leaves, "
            "no spines; 16 links");
  Cluster partial = preset("single-node", "h100-sxm", 4);
  EXPECT_EQ(partial.num_links(), 8U);
  EXPECT_EQ(partial.node_of(3), 0);
}

TEST(Cluster, RailOptimizedFatTreeShape) {
  Cluster c = preset("dgx-h100-superpod", "h100-sxm", 64);
  // 8 nodes in one 32-node group: a leaf per rail (8); non-blocking uplinks of
  // 32 x 50 GB/s = 1.6 TB/s per leaf = 32 ports of 50 GB/s over 8 spines, which carry the
  // flows as one fluid layer: one 1.6 TB/s link per leaf and direction.
  EXPECT_EQ(c.describe(),
            "nvswitch_fat_tree: 64 devices in 8 node(s) of 8; 8 node switches, 8 leaves, "
            "spines(x8); 272 links");
  for (std::size_t id = 0; id < c.num_links(); ++id) {
    const Link& l = c.link(static_cast<LinkId>(id));
    switch (l.cls) {
      case LinkClass::kScaleUp:
        EXPECT_DOUBLE_EQ(l.bandwidth, 450e9);
        EXPECT_DOUBLE_EQ(l.efficiency, 0.82);
        break;
      case LinkClass::kScaleOut:
        EXPECT_DOUBLE_EQ(l.bandwidth, 50e9);
        EXPECT_EQ(l.latency, base::from_us(1.0));
        break;
      case LinkClass::kFabric:
        EXPECT_DOUBLE_EQ(l.bandwidth, 1600e9);
        EXPECT_EQ(l.latency, base::from_us(0.3));
        EXPECT_DOUBLE_EQ(l.efficiency, 0.9);  // inherited from scale_out
        break;
    }
  }
}

TEST(Cluster, OversubscriptionAndOverridesShapeTheLinks) {
  TopologySpec spec = parse(R"(topology:
  kind: nvswitch_fat_tree
  oversubscription: 2
  spines: 4
  scale_up: {bandwidth: "900 GB/s"}
)");
  Cluster c(spec, profile("h100-sxm"), 64);
  double up_bw = 0.0;
  double fabric_bw = 0.0;
  for (std::size_t id = 0; id < c.num_links(); ++id) {
    const Link& l = c.link(static_cast<LinkId>(id));
    if (l.cls == LinkClass::kScaleUp) {
      up_bw = l.bandwidth;
    } else if (l.cls == LinkClass::kFabric) {
      fabric_bw = l.bandwidth;
    }
  }
  EXPECT_DOUBLE_EQ(up_bw, 900e9);
  EXPECT_DOUBLE_EQ(fabric_bw, 32 * 50e9 / 2);  // downlinks x NIC / oversubscription
}

TEST(Cluster, HccsMeshSplitsTheDeviceBandwidthOverPeerLinks) {
  Cluster c = preset("ascend-910b-cluster", "ascend-910b", 16);
  int mesh_links = 0;
  for (std::size_t id = 0; id < c.num_links(); ++id) {
    const Link& l = c.link(static_cast<LinkId>(id));
    if (l.cls == LinkClass::kScaleUp) {
      ++mesh_links;
      EXPECT_DOUBLE_EQ(l.bandwidth, 56e9);  // 392 GB/s over 7 peers
    }
  }
  EXPECT_EQ(mesh_links, 2 * 8 * 7);
}

TEST(ClusterErrors, DeviceCountsMustFillNodes) {
  TopologySpec spec = parse("topology:\n  kind: nvswitch_fat_tree\n");
  EXPECT_EQ(error_of([&] { Cluster c(spec, profile("h100-sxm"), 12); }),
            "t.yaml:2:3: error: num_devices (12) is not a multiple of devices_per_node (8); "
            "multi-node clusters are made of whole nodes");
  EXPECT_EQ(error_of([&] { Cluster c(spec, profile("h100-sxm"), 0); }),
            "t.yaml:2:3: error: a cluster needs at least one device, got 0");
  TopologySpec single = parse("topology: single-node\n");
  EXPECT_EQ(error_of([&] { Cluster c(single, profile("h100-sxm"), 16); }),
            "t.yaml:1:11: error: topology 'single-node' holds at most 1 node(s) of 8 devices; "
            "16 devices requested");
}

TEST(ClusterErrors, KindSpecificChecks) {
  TopologySpec spec;
  spec.kind = "torus";
  EXPECT_EQ(error_of([&] { Cluster c(spec, profile("h100-sxm"), 8); }),
            "error: unknown topology kind 'torus'; expected one of: nvswitch_fat_tree, "
            "hccs_mesh, ub_supernode");
  TopologySpec mesh = parse("topology:\n  kind: hccs_mesh\n  devices_per_node: 1\n");
  EXPECT_EQ(error_of([&] { Cluster c(mesh, profile("ascend-910b"), 4); }),
            "t.yaml:2:3: error: kind 'hccs_mesh' needs at least 2 devices per node; "
            "devices_per_node is 1");
  TopologySpec ub = parse("topology:\n  kind: ub_supernode\n  supernode_size: 20\n");
  EXPECT_EQ(error_of([&] { Cluster c(ub, profile("ascend-910c"), 40); }),
            "t.yaml:2:3: error: supernode_size (20) is not a multiple of devices_per_node (8); "
            "a supernode holds whole nodes");
  TopologySpec negative;
  negative.scale_out.bandwidth = -1.0;
  EXPECT_EQ(error_of([&] { Cluster c(negative, profile("h100-sxm"), 8); }),
            "error: scale_out link: negative bandwidth or latency, or efficiency outside (0, 1]");
}

// Speed is measured by scripts/bench.sh, not asserted here: this checks the shape and that
// every route of a 1024-GPU cluster exists.
TEST(Cluster, ThousandDeviceClusterRoutesEveryPair) {
  Cluster c = preset("dgx-h100-superpod", "h100-sxm", 1024);
  EXPECT_EQ(c.describe(),
            "nvswitch_fat_tree: 1024 devices in 128 node(s) of 8; 128 node switches, "
            "32 leaves, spines(x8); 4160 links");
  for (int dst = 1; dst < c.num_devices(); ++dst) {
    ASSERT_FALSE(c.route(0, dst).empty());
  }
}

}  // namespace
}  // namespace tessera::topology
