// SPDX-License-Identifier: Apache-2.0
// The gb200-nvl72 preset: 72 GPUs per NVLink domain (one aggregated NVSwitch-tray vertex per
// rack), racks joined by the rail-optimized scale-out fabric; link counts by class.
#include <gtest/gtest.h>

#include <map>

#include "hwprofiles/hw_profile.h"
#include "topology/cluster.h"

namespace tessera::topology {
namespace {

Cluster nvl72(const std::string& part, int devices) {
  return Cluster(load_topology_preset("gb200-nvl72", {}), hw::load_profile(part), devices);
}

std::map<LinkClass, int> links_by_class(const Cluster& c) {
  std::map<LinkClass, int> out;
  for (std::size_t id = 0; id < c.num_links(); ++id) {
    ++out[c.link(static_cast<LinkId>(id)).cls];
  }
  return out;
}

TEST(Gb200Nvl72, OneRackIsOneScaleUpDomainWithoutScaleOut) {
  Cluster c = nvl72("gb200", 72);
  EXPECT_EQ(c.devices_per_node(), 72);
  EXPECT_EQ(c.describe(),
            "nvswitch_fat_tree: 72 devices in 1 node(s) of 72; 1 node switches, 0 leaves, "
            "no spines; 144 links");
  // Any two GPUs of the rack: GPU -> NVSwitch trays -> GPU at the full NVLink5 rate.
  const auto& route = c.route(0, 71);
  ASSERT_EQ(route.size(), 2U);
  for (LinkId id : route) {
    EXPECT_EQ(c.link(id).cls, LinkClass::kScaleUp);
    EXPECT_DOUBLE_EQ(c.link(id).bandwidth, 900e9);
  }
}

TEST(Gb200Nvl72, RacksAreJoinedRailByRail) {
  Cluster c = nvl72("gb200", 4 * 72);
  // 4 racks in one 8-rack scalable unit: 72 rails, one leaf each, then the spine layer.
  EXPECT_EQ(c.describe(),
            "nvswitch_fat_tree: 288 devices in 4 node(s) of 72; 4 node switches, 72 leaves, "
            "spines(x8); 1296 links");
  std::map<LinkClass, int> counts = links_by_class(c);
  EXPECT_EQ(counts[LinkClass::kScaleUp], 2 * 288);   // an up and a down link per GPU
  EXPECT_EQ(counts[LinkClass::kScaleOut], 2 * 288);  // one NIC per GPU, both directions
  EXPECT_EQ(counts[LinkClass::kFabric], 2 * 72);     // each rail leaf to the spines
  // Same rank in two racks: NIC -> rail leaf -> NIC, never the spine.
  const auto& same_rail = c.route(5, 72 + 5);
  ASSERT_EQ(same_rail.size(), 2U);
  EXPECT_EQ(c.link(same_rail[0]).cls, LinkClass::kScaleOut);
  EXPECT_DOUBLE_EQ(c.link(same_rail[0]).bandwidth, 50e9);  // 400 Gb/s ConnectX-7
  // Inside a rack traffic stays on NVLink even between GPUs of different compute trays.
  EXPECT_EQ(c.link(c.route(3, 70).front()).cls, LinkClass::kScaleUp);
}

TEST(Gb200Nvl72, B200WithThePresetKeepsTheRack) {
  // The preset names the rack size itself, so b200 (8 per HGX node) also builds NVL72 racks.
  Cluster c = nvl72("b200", 144);
  EXPECT_EQ(c.devices_per_node(), 72);
  EXPECT_EQ(c.node_of(71), 0);
  EXPECT_EQ(c.node_of(72), 1);
}

TEST(Gb200Nvl72, PartialRacksTakeEqualTraysOfTheFewestRacks) {
  // Published GB200 jobs of 256 GPUs: 4 racks of 16 trays (64 GPUs), each one NVLink domain.
  Cluster c = nvl72("gb200", 256);
  EXPECT_EQ(c.devices_per_node(), 64);
  EXPECT_EQ(c.describe(),
            "nvswitch_fat_tree: 256 devices in 4 node(s) of 64; 4 node switches, 64 leaves, "
            "spines(x8); 1152 links");
  EXPECT_EQ(c.link(c.route(0, 63).front()).cls, LinkClass::kScaleUp);
  EXPECT_EQ(c.link(c.route(63, 64).front()).cls, LinkClass::kScaleOut);
  EXPECT_EQ(nvl72("gb200", 64).devices_per_node(), 72);  // one rack, partly used
}

TEST(Gb200Nvl72, JobPlacementFollowsTheAllocationUnit) {
  TopologySpec spec = load_topology_preset("gb200-nvl72", {});
  EXPECT_EQ(job_devices_per_node(spec, 72, 512), 64);
  EXPECT_EQ(job_devices_per_node(spec, 72, 136), 68);  // 2 racks of 17 trays
  EXPECT_EQ(job_devices_per_node(spec, 72, 144), 72);  // whole racks
  EXPECT_EQ(job_devices_per_node(spec, 72, 100), 0);   // 2 racks of 50: not whole trays
  spec.allocation_unit = 0;                            // whole nodes only
  EXPECT_EQ(job_devices_per_node(spec, 72, 256), 0);
  EXPECT_EQ(job_devices_per_node(spec, 72, 40), 72);  // part of one node
}

}  // namespace
}  // namespace tessera::topology
