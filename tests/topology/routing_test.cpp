// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "topology/cluster.h"

namespace tessera::topology {
namespace {

using base::YamlNode;

const hw::Profile& h100() {
  static const hw::Profile p = hw::load_profile("h100-sxm");
  return p;
}

Cluster inline_cluster(const std::string& text, const hw::Profile& part, int devices) {
  auto root = YamlNode::load_string(text, "t.yaml");
  return Cluster(parse_topology(root.at("topology")), part, devices);
}

// "dev0 > node0.nvswitch > dev5": the vertices a route visits.
std::string hops(const Cluster& c, int src, int dst) {
  const auto& route = c.route(src, dst);
  std::string out = c.vertex_name(c.link(route.front()).from);
  for (LinkId id : route) {
    out += " > " + c.vertex_name(c.link(id).to);
  }
  return out;
}

std::vector<LinkClass> classes(const Cluster& c, int src, int dst) {
  std::vector<LinkClass> out;
  for (LinkId id : c.route(src, dst)) {
    out.push_back(c.link(id).cls);
  }
  return out;
}

constexpr LinkClass kUp = LinkClass::kScaleUp;
constexpr LinkClass kOut = LinkClass::kScaleOut;
constexpr LinkClass kFab = LinkClass::kFabric;

// 16 nodes of 8 H100s, 4 nodes per leaf group: 4 groups x 8 rails = 32 leaves.
Cluster small_superpod() {
  return inline_cluster("topology:\n  kind: nvswitch_fat_tree\n  nodes_per_leaf: 4\n", h100(), 128);
}

TEST(Routing, IntraNodeTakesTwoNvlinkHopsThroughTheNvSwitch) {
  Cluster c = small_superpod();
  EXPECT_EQ(hops(c, 1, 5), "dev1 > node0.nvswitch > dev5");
  EXPECT_EQ(classes(c, 1, 5), (std::vector<LinkClass>{kUp, kUp}));
  EXPECT_EQ(c.path_latency(1, 5), 2 * base::from_us(0.47));
}

TEST(Routing, SameRailAcrossNodesUsesOnlyTheLeaf) {
  Cluster c = small_superpod();
  EXPECT_EQ(hops(c, 2, 10), "dev2 > leaf.g0.r2 > dev10");
  EXPECT_EQ(classes(c, 2, 10), (std::vector<LinkClass>{kOut, kOut}));
}

TEST(Routing, OtherLeafGroupsAndOtherRailsGoThroughASpine) {
  Cluster c = small_superpod();
  const auto& far = c.route(0, 64);  // node 8: group 2, same rail
  ASSERT_EQ(far.size(), 4U);
  EXPECT_EQ(c.vertex_name(c.link(far[0]).to), "leaf.g0.r0");
  EXPECT_EQ(c.vertex_kind(c.link(far[1]).to), VertexKind::kSpine);
  EXPECT_EQ(c.vertex_name(c.link(far[2]).to), "leaf.g2.r0");
  EXPECT_EQ(classes(c, 0, 64), (std::vector<LinkClass>{kOut, kFab, kFab, kOut}));
  // Another rail in another node: the spine, never NVLink to a peer GPU first.
  EXPECT_EQ(classes(c, 0, 9), (std::vector<LinkClass>{kOut, kFab, kFab, kOut}));
  // No fabric latency given inline: switch-to-switch links inherit scale_out's 1 us.
  EXPECT_EQ(c.path_latency(0, 9), 4 * base::from_us(1.0));
}

TEST(Routing, WithoutRailsIntraNodeStillStaysOnNvlink) {
  // Every GPU of a node shares one leaf, so GPU->leaf->GPU ties NVLink on hop count.
  Cluster c =
      inline_cluster("topology:\n  kind: nvswitch_fat_tree\n  rail_optimized: false\n", h100(), 32);
  EXPECT_EQ(hops(c, 0, 1), "dev0 > node0.nvswitch > dev1");
  EXPECT_EQ(hops(c, 0, 9), "dev0 > leaf.g0.r0 > dev9");
}

TEST(Routing, HccsMeshIsOneHopInsideAServer) {
  Cluster c =
      Cluster(load_topology_preset("ascend-910b-cluster", {}), hw::load_profile("ascend-910b"), 32);
  EXPECT_EQ(hops(c, 0, 7), "dev0 > dev7");
  EXPECT_DOUBLE_EQ(c.link(c.route(0, 7).front()).bandwidth, 56e9);
  EXPECT_EQ(hops(c, 3, 11), "dev3 > leaf.g0.r3 > dev11");
}

TEST(Routing, UbSupernodeKeepsTrafficOnTheUnifiedBus) {
  Cluster c =
      Cluster(load_topology_preset("cloudmatrix384", {}), hw::load_profile("ascend-910c"), 768);
  EXPECT_EQ(hops(c, 0, 100), "dev0 > supernode0.ub > dev100");
  EXPECT_EQ(hops(c, 383, 0), "dev383 > supernode0.ub > dev0");
  EXPECT_EQ(classes(c, 0, 384), (std::vector<LinkClass>{kOut, kFab, kFab, kOut}));
}

TEST(Routing, EveryRouteIsAChainOfLinksBetweenItsEnds) {
  Cluster c = small_superpod();
  for (int src = 0; src < c.num_devices(); ++src) {
    for (int dst = 0; dst < c.num_devices(); ++dst) {
      const auto& route = c.route(src, dst);
      if (src == dst) {
        EXPECT_TRUE(route.empty());
        continue;
      }
      ASSERT_FALSE(route.empty());
      EXPECT_EQ(c.link(route.front()).from, src);
      EXPECT_EQ(c.link(route.back()).to, dst);
      for (std::size_t i = 0; i + 1 < route.size(); ++i) {
        ASSERT_EQ(c.link(route[i]).to, c.link(route[i + 1]).from);
        EXPECT_NE(c.vertex_kind(c.link(route[i]).to), VertexKind::kDevice);  // no GPU transit
      }
      if (c.node_of(src) == c.node_of(dst)) {
        EXPECT_EQ(classes(c, src, dst), (std::vector<LinkClass>{kUp, kUp}));
      }
    }
  }
}

TEST(Routing, RoutesAreDeterministicAcrossBuildsAndCalls) {
  Cluster a = small_superpod();
  Cluster b = small_superpod();
  for (int src = 0; src < a.num_devices(); src += 3) {
    for (int dst = 0; dst < a.num_devices(); dst += 5) {
      EXPECT_EQ(a.route(src, dst), b.route(src, dst));
      EXPECT_EQ(&a.route(src, dst), &a.route(src, dst));  // cached
    }
  }
}

TEST(Routing, CrossLeafRoutesShareTheFluidSpineLayer) {
  Cluster c = small_superpod();
  std::set<std::int32_t> spines;
  for (int src = 0; src < 32; src += 8) {      // rail 0 of group 0
    for (int dst = 32; dst < 128; dst += 8) {  // rail 0 of groups 1-3
      const auto& r = c.route(src, dst);
      ASSERT_EQ(r.size(), 4U);  // NIC up, leaf -> spines, spines -> leaf, NIC down
      spines.insert(c.link(r[1]).to);
    }
  }
  // ECMP is modelled as an even spread: one aggregated spine vertex, the same for every flow.
  EXPECT_EQ(spines.size(), 1U);
}

}  // namespace
}  // namespace tessera::topology
