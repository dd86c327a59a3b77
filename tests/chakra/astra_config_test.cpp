// SPDX-License-Identifier: Apache-2.0
// The ASTRA-sim network YAML and system JSON written beside the traces: every topology
// preset maps to the dimensions, bandwidths (GB/s of 2^30 bytes, x collective efficiency)
// and per-link latencies its profile and spec give, and the files say so in ASTRA-sim's keys.
#include "interop/astra_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "hwprofiles/hw_profile.h"
#include "topology/cluster.h"

namespace tessera::interop {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Mapped {
  AstraConfig config;
  hw::Profile profile;
  topology::TopologySpec spec;
};

Mapped map(const std::string& preset, const std::string& hardware, int devices) {
  Mapped m{{}, hw::load_profile(hardware), topology::load_topology_preset(preset, {})};
  m.config = astra_config(m.spec, m.profile, devices, base::DType::kBF16);
  return m;
}

void expect_dim(const AstraDim& d, const char* topology, int npus, double bytes_per_s,
                double latency_ns, const char* impl) {
  EXPECT_EQ(d.topology, topology);
  EXPECT_EQ(d.npus, npus);
  EXPECT_DOUBLE_EQ(d.bandwidth, bytes_per_s / kGiB);
  EXPECT_DOUBLE_EQ(d.latency_ns, latency_ns);
  EXPECT_EQ(d.implementation, impl);
}

double eff_bw(const hw::LinkSpec& l) {
  return l.bandwidth * l.efficiency;
}

double ns(base::SimTime t) {
  return static_cast<double>(t) / 1000.0;
}

TEST(AstraConfig, SingleNodeIsOneNvSwitchDimension) {
  const Mapped m = map("single-node", "h100-sxm", 8);
  ASSERT_EQ(m.config.dims.size(), 1U);
  // h100-sxm: NVLink4 450 GB/s per direction x 0.82 NCCL efficiency, 0.47 us per link.
  expect_dim(m.config.dims[0], "Switch", 8, 450e9 * 0.82, 470.0, "ring");
  EXPECT_DOUBLE_EQ(m.config.peak_tflops, 989.4 * 0.87);
  EXPECT_DOUBLE_EQ(m.config.local_mem_bw_gbps, 3350.0 * 0.9);
  EXPECT_DOUBLE_EQ(m.config.endpoint_delay_ns, 10000.0);  // the Simple protocol's step
}

// 1024 GPUs = 128 nodes, 32 per leaf and rail: node switch, leaf, spine.
TEST(AstraConfig, DgxH100SuperpodIsNodeLeafSpine) {
  const Mapped m = map("dgx-h100-superpod", "h100-sxm", 1024);
  ASSERT_EQ(m.config.dims.size(), 3U);
  const hw::LinkSpec& nic = m.profile.scale_out;
  expect_dim(m.config.dims[0], "Switch", 8, eff_bw(m.profile.scale_up), 470.0, "ring");
  expect_dim(m.config.dims[1], "Switch", 32, eff_bw(nic), ns(nic.latency), "ring");
  EXPECT_DOUBLE_EQ(m.config.dims[1].bandwidth, 400e9 / 8 * 0.9 / kGiB);
  // Leaf -> spine -> leaf adds the fabric's 0.3 us per direction change.
  expect_dim(m.config.dims[2], "Switch", 4, eff_bw(nic), ns(nic.latency) + 300.0, "ring");
}

// 160 GPUs = 20 nodes: one scalable unit, every node under one leaf per rail.
TEST(AstraConfig, DgxA100ScalableUnitHasNoSpineDimension) {
  const Mapped m = map("dgx-a100-superpod", "a100-sxm-80gb", 160);
  ASSERT_EQ(m.config.dims.size(), 2U);
  expect_dim(m.config.dims[0], "Switch", 8, eff_bw(m.profile.scale_up),
             ns(m.profile.scale_up.latency), "ring");
  expect_dim(m.config.dims[1], "Switch", 20, eff_bw(m.profile.scale_out),
             ns(m.profile.scale_out.latency), "ring");
}

// Atlas 800T A2: 8 NPUs fully meshed by HCCS, the profile's per-NPU bandwidth split over 7
// links, direct collectives on the mesh.
TEST(AstraConfig, Ascend910bClusterIsHccsMeshThenLeaf) {
  const Mapped m = map("ascend-910b-cluster", "ascend-910b", 64);
  ASSERT_EQ(m.config.dims.size(), 2U);
  const hw::LinkSpec& up = m.profile.scale_up;
  expect_dim(m.config.dims[0], "FullyConnected", 8, eff_bw(up) / 7.0, ns(up.latency), "direct");
  expect_dim(m.config.dims[1], "Switch", 8, eff_bw(m.profile.scale_out),
             ns(m.profile.scale_out.latency), "ring");
}

// Two CloudMatrix384 supernodes: the UB switch of 384 chips, then the RoCE spine.
TEST(AstraConfig, CloudMatrixIsUbSupernodeThenSpine) {
  const Mapped m = map("cloudmatrix384", "ascend-910c", 768);
  ASSERT_EQ(m.config.dims.size(), 2U);
  expect_dim(m.config.dims[0], "Switch", 384, eff_bw(m.profile.scale_up),
             ns(m.profile.scale_up.latency), "ring");
  expect_dim(m.config.dims[1], "Switch", 2, eff_bw(m.profile.scale_out),
             ns(m.profile.scale_out.latency) + 500.0, "ring");
}

// 48 nodes in leaf groups of 32 cannot be two even dimensions: one spine dimension.
TEST(AstraConfig, UnevenLeafGroupsFallBackToOneScaleOutDimension) {
  const Mapped m = map("dgx-h100-superpod", "h100-sxm", 384);
  ASSERT_EQ(m.config.dims.size(), 2U);
  expect_dim(m.config.dims[1], "Switch", 48, eff_bw(m.profile.scale_out),
             ns(m.profile.scale_out.latency) + 300.0, "ring");
}

TEST(AstraConfig, OversubscriptionDividesTheSpineBandwidth) {
  hw::Profile profile = hw::load_profile("h100-sxm");
  topology::TopologySpec spec = topology::load_topology_preset("dgx-h100-superpod", {});
  spec.oversubscription = 2.0;
  spec.nodes_per_leaf = 4;
  const AstraConfig c = astra_config(spec, profile, 64, base::DType::kBF16);
  ASSERT_EQ(c.dims.size(), 3U);
  EXPECT_EQ(c.dims[1].npus, 4);
  EXPECT_EQ(c.dims[2].npus, 2);
  EXPECT_DOUBLE_EQ(c.dims[2].bandwidth, 400e9 / 8 / 2.0 * 0.9 / kGiB);
  EXPECT_NE(astra_network_yaml(c).find("oversubscription 2"), std::string::npos);
}

TEST(AstraConfig, OneDeviceIsRejected) {
  hw::Profile profile = hw::load_profile("h100-sxm");
  EXPECT_THROW(astra_config(topology::load_topology_preset("single-node", {}), profile, 1,
                            base::DType::kBF16),
               base::InputError);
}

TEST(AstraConfig, FilesUseAstraSimKeys) {
  const Mapped m = map("dgx-h100-superpod", "h100-sxm", 1024);
  const std::string yml = astra_network_yaml(m.config);
  EXPECT_NE(yml.find("\ntopology: [ Switch, Switch, Switch ]\n"), std::string::npos) << yml;
  EXPECT_NE(yml.find("\nnpus_count: [ 8, 32, 4 ]\n"), std::string::npos) << yml;
  EXPECT_NE(yml.find("\nbandwidth: [ "), std::string::npos);
  EXPECT_NE(yml.find("\nlatency: [ 470, 1000, 1300 ]"), std::string::npos) << yml;
  EXPECT_NE(yml.find("# Not expressible in this format:"), std::string::npos);
  EXPECT_NE(yml.find("rails"), std::string::npos);
  const auto sys = nlohmann::json::parse(astra_system_json(m.config));
  for (const char* key : {"all-reduce-implementation", "all-gather-implementation",
                          "reduce-scatter-implementation", "all-to-all-implementation"}) {
    ASSERT_TRUE(sys.contains(key)) << key;
    EXPECT_EQ(sys[key].size(), 3U) << key;
  }
  for (const char* key : {"scheduling-policy", "endpoint-delay", "active-chunks-per-dimension",
                          "preferred-dataset-splits", "collective-optimization", "local-mem-bw",
                          "boost-mode", "roofline-enabled", "peak-perf"}) {
    EXPECT_TRUE(sys.contains(key)) << key;
  }
  EXPECT_TRUE(sys["endpoint-delay"].is_number_integer());
  EXPECT_EQ(nlohmann::json::parse(astra_memory_json())["memory-type"], "NO_MEMORY_EXPANSION");
}

}  // namespace
}  // namespace tessera::interop
