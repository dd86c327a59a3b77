// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tests/input_error.h"
#include "topology/cluster.h"

namespace tessera::topology {
namespace {

using base::YamlNode;

using testing::error_of;

TopologySpec parse(const std::string& text) {
  return parse_topology(YamlNode::load_string(text, "t.yaml").at("topology"));
}

std::string parse_error(const std::string& text) {
  return error_of([&] { (void)parse(text); });
}

TEST(TopologySpec, ShipsThePresets) {
  EXPECT_EQ(preset_names(),
            (std::vector<std::string>{"ascend-910b-cluster", "cloudmatrix384", "dgx-a100-superpod",
                                      "dgx-b200-superpod", "dgx-h100-superpod", "gb200-nvl72",
                                      "single-node"}));
  EXPECT_EQ(topology_kinds(),
            (std::vector<std::string>{"nvswitch_fat_tree", "hccs_mesh", "ub_supernode"}));
}

TEST(TopologySpec, AScalarNamesAPreset) {
  TopologySpec spec = parse("topology: dgx-h100-superpod\n");
  EXPECT_EQ(spec.kind, "nvswitch_fat_tree");
  EXPECT_EQ(spec.source, "dgx-h100-superpod");
  EXPECT_EQ(spec.devices_per_node, 8);
  EXPECT_EQ(spec.nodes_per_leaf, 32);
  EXPECT_TRUE(spec.rail_optimized);
  EXPECT_EQ(spec.fabric.latency, base::from_us(0.3));
  EXPECT_EQ(spec.fabric.bandwidth, 0.0);  // inherit from scale_out
  EXPECT_EQ(spec.where.str(), "t.yaml:1:11");
}

TEST(TopologySpec, InlineMappingWithOverrides) {
  TopologySpec spec = parse(R"(topology:
  kind: hccs_mesh
  devices_per_node: 4
  nodes_per_leaf: 2
  rail_optimized: false
  oversubscription: 2.5
  spines: 3
  scale_up: {bandwidth: "200 GB/s"}
  scale_out: {latency: "2 us", efficiency: 0.8}
)");
  EXPECT_EQ(spec.kind, "hccs_mesh");
  EXPECT_EQ(spec.devices_per_node, 4);
  EXPECT_FALSE(spec.rail_optimized);
  EXPECT_DOUBLE_EQ(spec.oversubscription, 2.5);
  EXPECT_EQ(spec.spines, 3);
  EXPECT_DOUBLE_EQ(spec.scale_up.bandwidth, 200e9);
  EXPECT_EQ(spec.scale_up.latency, 0);
  EXPECT_EQ(spec.scale_out.latency, base::from_us(2.0));
  EXPECT_DOUBLE_EQ(spec.scale_out.efficiency, 0.8);
  EXPECT_EQ(spec.source, "t.yaml");
  EXPECT_EQ(spec.where.str(), "t.yaml:2:3");
}

TEST(TopologySpecErrors, UnknownKindListsTheValidOnes) {
  EXPECT_EQ(parse_error("topology:\n  kind: torus\n"),
            "t.yaml:2:9: error: 'topology.kind': unknown value 'torus'; expected one of: "
            "nvswitch_fat_tree, hccs_mesh, ub_supernode");
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesj\n"),
            "t.yaml:2:9: error: 'topology.kind': unknown value 'hccs_mesj'; did you mean "
            "'hccs_mesh'? (expected one of: nvswitch_fat_tree, hccs_mesh, ub_supernode)");
  EXPECT_EQ(parse_error("topology:\n  devices_per_node: 8\n"),
            "t.yaml:2:3: error: 'topology': missing required key 'kind'");
}

TEST(TopologySpecErrors, UnknownKeysAndMisplacedKeys) {
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  nodes_per_lief: 4\n"),
            "t.yaml:3:3: error: unknown key 'nodes_per_lief' in 'topology'; did you mean "
            "'nodes_per_leaf'? (valid keys: kind, description, devices_per_node, "
            "nodes_per_leaf, rail_optimized, oversubscription, spines, supernode_size, "
            "max_nodes, allocation_unit, scale_up, scale_out, fabric)");
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  supernode_size: 16\n"),
            "t.yaml:3:19: error: 'topology.supernode_size': only kind 'ub_supernode' takes "
            "this key, not 'hccs_mesh'");
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  fabric: {bandwidth: \"1 GB/s\", "
                        "latncy: \"1 us\"}\n"),
            "t.yaml:3:33: error: unknown key 'latncy' in 'topology.fabric'; did you mean "
            "'latency'? (valid keys: bandwidth, latency, efficiency)");
}

TEST(TopologySpecErrors, BadValuesAreLocated) {
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  scale_up: {bandwidth: \"-5 GB/s\"}\n"),
            "t.yaml:3:25: error: 'topology.scale_up.bandwidth': expected a non-negative value, "
            "got '-5 GB/s'");
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  scale_out: {bandwidth: 400}\n"),
            "t.yaml:3:26: error: 'topology.scale_out.bandwidth': expected a bandwidth with a "
            "unit, e.g. \"900 GB/s\" or \"400 Gb/s\", got '400'");
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  oversubscription: 0.5\n"),
            "t.yaml:3:21: error: 'topology.oversubscription': expected a number >= 1, got 0.5");
  EXPECT_EQ(parse_error("topology:\n  kind: hccs_mesh\n  nodes_per_leaf: 0\n"),
            "t.yaml:3:19: error: 'topology.nodes_per_leaf': expected an integer in [1, "
            "1048576], got 0");
}

TEST(TopologySpecErrors, UnknownPresetSuggests) {
  EXPECT_EQ(parse_error("topology: dgx-h100-superpot\n"),
            "t.yaml:1:11: error: unknown topology preset 'dgx-h100-superpot'; did you mean "
            "'dgx-h100-superpod'? (available presets: ascend-910b-cluster, cloudmatrix384, "
            "dgx-a100-superpod, dgx-b200-superpod, dgx-h100-superpod, gb200-nvl72, single-node)");
  EXPECT_EQ(error_of([] { (void)load_topology_preset("../hwprofiles/h100-sxm", {}); }),
            "error: unknown topology preset '../hwprofiles/h100-sxm'; available presets: "
            "ascend-910b-cluster, cloudmatrix384, dgx-a100-superpod, dgx-b200-superpod, "
            "dgx-h100-superpod, gb200-nvl72, single-node");
}

}  // namespace
}  // namespace tessera::topology
