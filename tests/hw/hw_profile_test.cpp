// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/hw_profile.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "base/error.h"
#include "base/yaml_reader.h"
#include "tests/input_error.h"

namespace tessera::hw {
namespace {

using base::DType;
using base::YamlNode;

using testing::error_of;

// A complete, valid profile; the bad-profile tests each change one line of it.
constexpr const char* kValid = R"(name: bad
description: "test part"
peak:
  bf16: "100 TFLOP/s"
  fp32: "10 TFLOP/s"
vector_flops: "10 TFLOP/s"
hbm:
  capacity: "80 GiB"
  bandwidth: "2 TB/s"
  efficiency: 0.9
  reserved: "2 GiB"
  half_size: "12 MB"
gemm:
  tiles: ["128x256", "64x64"]
  compute_units: 100
  max_fraction: {bf16: 0.8}
  k_half: 64
  small_tile_exponent: 0.5
  latency: "5 us"
  split_k_overhead: "3 us"
attention:
  forward: {64: 0.5, 128: 0.7}
  backward: {128: 0.6}
  seq_half: {forward: 256, backward: 512}
  causal_seq_factor: 2
launch: {stream: "2.5 us", graph: "1.3 us", host: "7.5 us"}
devices_per_node: 8
scale_up: {bandwidth: "450 GB/s", latency: "0.5 us", efficiency: 0.8}
scale_out: {bandwidth: "400 Gb/s", latency: "1 us", efficiency: 0.9}
collective: {launch: "6 us", step: "1 us"}
)";

std::string with(std::string from, const std::string& to) {
  std::string text = kValid;
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string load_error(const std::string& text) {
  return error_of([&] { (void)profile_from_yaml(YamlNode::load_string(text, "bad.yaml"), "bad"); });
}

TEST(HwProfile, ShipsTheProfiles) {
  EXPECT_EQ(profile_names(),
            (std::vector<std::string>{"a100-sxm-80gb", "ascend-910b", "ascend-910c", "b200", "b300",
                                      "gb200", "gb300", "h100-sxm", "h100-sxm-96gb", "h200-sxm",
                                      "h800-sxm"}));
}

TEST(HwProfile, EveryShippedProfileLoadsAndIsConsistent) {
  for (const auto& name : profile_names()) {
    SCOPED_TRACE(name);
    Profile p = load_profile(name);
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.description.empty());
    EXPECT_GT(p.peak(DType::kBF16), 0.0);
    EXPECT_GT(p.peak(DType::kFP32), 0.0);
    EXPECT_GT(p.hbm_capacity, p.reserved_memory);
    EXPECT_GT(p.scale_up.bandwidth, p.scale_out.bandwidth);
    EXPECT_GT(p.scale_up.latency, 0);
    EXPECT_LT(p.scale_up.latency, p.scale_out.latency);
    EXPECT_GT(p.collective_launch, 0);
    // An NVL72 rack is one node.
    EXPECT_EQ(p.devices_per_node, name == "gb200" || name == "gb300" ? 72 : 8);
  }
}

TEST(HwProfile, H100ValuesAndUnits) {
  Profile p = load_profile("h100-sxm");
  EXPECT_DOUBLE_EQ(p.peak(DType::kBF16), 989.4e12);
  EXPECT_DOUBLE_EQ(p.peak(DType::kFP8), 1978.9e12);
  EXPECT_DOUBLE_EQ(p.hbm_capacity, 81559.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(p.hbm_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(p.scale_up.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(p.scale_out.bandwidth, 50e9);  // 400 Gb/s
  EXPECT_EQ(p.scale_up.latency, base::from_us(0.47));
  EXPECT_EQ(p.launch.stream, base::from_us(2.4));
  EXPECT_EQ(p.launch.graph, base::from_us(1.3));
  EXPECT_EQ(p.gemm.compute_units, 132);
  EXPECT_EQ(p.gemm.tiles.front().m, 128);
  EXPECT_EQ(p.gemm.tiles.front().n, 256);
  EXPECT_DOUBLE_EQ(p.gemm.fraction(DType::kFP8), 0.69);
  EXPECT_DOUBLE_EQ(p.gemm.fraction(DType::kFP16), p.gemm.max_fraction);
}

TEST(HwProfile, AbsentDTypesAreUnsupported) {
  EXPECT_EQ(load_profile("a100-sxm-80gb").peak(DType::kFP8), 0.0);
  EXPECT_EQ(load_profile("ascend-910b").peak(DType::kFP8), 0.0);
}

TEST(HwProfile, AscendDevicesAreTwoDiesApart) {
  Profile b = load_profile("ascend-910b");
  Profile c = load_profile("ascend-910c");
  EXPECT_DOUBLE_EQ(c.peak(DType::kBF16), 2 * b.peak(DType::kBF16));
  EXPECT_DOUBLE_EQ(c.hbm_bandwidth, 2 * b.hbm_bandwidth);
  EXPECT_EQ(c.gemm.compute_units, 2 * b.gemm.compute_units);
}

TEST(HwProfile, LoadsByPath) {
  Profile p = load_profile(profiles_dir() + "/a100-sxm-80gb.yaml");
  EXPECT_EQ(p.name, "a100-sxm-80gb");
  EXPECT_EQ(p.gemm.compute_units, 108);
}

TEST(HwProfile, UnknownNameSuggestsAndLists) {
  EXPECT_EQ(error_of([] { (void)load_profile("h100-sx"); }),
            "error: unknown hardware profile 'h100-sx'; did you mean 'h100-sxm'? (available "
            "profiles: a100-sxm-80gb, ascend-910b, ascend-910c, b200, b300, gb200, gb300, "
            "h100-sxm, h100-sxm-96gb, h200-sxm, h800-sxm)");
  EXPECT_EQ(error_of([] {
              (void)load_profile("tpu", base::SourceLoc{"s.yaml", 3, 7});
            }),
            "s.yaml:3:7: error: unknown hardware profile 'tpu'; available profiles: "
            "a100-sxm-80gb, ascend-910b, ascend-910c, b200, b300, gb200, gb300, h100-sxm, "
            "h100-sxm-96gb, h200-sxm, h800-sxm");
}

TEST(HwProfile, MissingFileNamesThePath) {
  EXPECT_EQ(error_of([] { (void)load_profile("/nonexistent/x.yaml"); }),
            "/nonexistent/x.yaml: error: cannot open file");
}

// fp8_transpose goes with an fp8 peak: Hopper parts need transposed FP8 copies, Blackwell not.
TEST(HwProfile, Fp8TransposeIsGivenExactlyWithAnFp8Peak) {
  for (const char* name : {"h100-sxm", "h200-sxm", "h800-sxm"}) {
    EXPECT_TRUE(load_profile(name).fp8_transpose) << name;
  }
  for (const char* name : {"b200", "gb200", "a100-sxm-80gb"}) {
    EXPECT_FALSE(load_profile(name).fp8_transpose) << name;
  }
  EXPECT_EQ(
      load_error(with("  fp32: \"10 TFLOP/s\"", "  fp32: \"10 TFLOP/s\"\n  fp8: \"200 TFLOP/s\"")),
      "bad.yaml:6:8: error: 'peak.fp8': a part with an fp8 peak needs the key "
      "'fp8_transpose' (true: FP8 GEMMs read both operands K-major only, as on Hopper; "
      "false: either layout, as on Blackwell)");
  EXPECT_EQ(load_error(with("devices_per_node: 8", "devices_per_node: 8\nfp8_transpose: true")),
            "bad.yaml:28:16: error: 'fp8_transpose': this describes FP8 GEMMs, but the part has "
            "no peak.fp8");
}

TEST(HwProfile, TheValidFixtureLoads) {
  Profile p = profile_from_yaml(YamlNode::load_string(kValid, "bad.yaml"), "bad");
  EXPECT_DOUBLE_EQ(p.scale_out.bandwidth, 50e9);
  EXPECT_EQ(p.collective_step, base::from_us(1.0));
  EXPECT_EQ(p.peak(DType::kFP16), 0.0);
  ASSERT_EQ(p.gemm.tiles.size(), 2U);
  EXPECT_EQ(p.gemm.tiles[1].m, 64);
  EXPECT_DOUBLE_EQ(p.gemm.fraction(DType::kFP8), 0.8);  // absent: as bf16
  EXPECT_EQ(p.gemm.latency, base::from_us(5.0));
  EXPECT_DOUBLE_EQ(p.hbm_half_bytes, 12e6);
  ASSERT_EQ(p.attention.forward.size(), 2U);
  EXPECT_DOUBLE_EQ(p.attention.seq_half_backward, 512.0);
  // Derived: forward + backward at head dim 128, time-weighted.
  EXPECT_DOUBLE_EQ(p.attention_fraction, 3.5 / (1.0 / 0.7 + 2.5 / 0.6));
  EXPECT_EQ(p.launch.host, base::from_us(7.5));
}

TEST(HwProfileErrors, UnknownKeySuggestsTheNearest) {
  EXPECT_EQ(load_error(with("launch: {", "lanch: {")),
            "bad.yaml:26:1: error: unknown key 'lanch'; did you mean 'launch'? "
            "(valid keys: name, extends, description, peak, vector_flops, hbm, gemm, "
            "attention, launch, under_load, power, devices_per_node, scale_up, scale_out, "
            "collective, fp8_transpose, mxfp8, device_names, topology)");
  EXPECT_EQ(load_error(with("  bf16:", "  bf61:")),
            "bad.yaml:4:3: error: unknown key 'bf61' in 'peak'; did you mean 'bf16'? "
            "(valid keys: bf16, fp16, fp32, fp8)");
}

TEST(HwProfileErrors, QuantitiesNeedTheirUnits) {
  EXPECT_EQ(load_error(with("\"450 GB/s\"", "450")),
            "bad.yaml:28:23: error: 'scale_up.bandwidth': expected a bandwidth with a unit, "
            "e.g. \"900 GB/s\" or \"400 Gb/s\", got '450'");
  EXPECT_EQ(load_error(with("\"2.5 us\"", "\"4 GB\"")),
            "bad.yaml:26:18: error: 'launch.stream': expected a time with a unit, e.g. "
            "\"1.5 us\", got '4 GB'");
}

TEST(HwProfileErrors, ComputeSectionsSayWhatTheyExpect) {
  EXPECT_EQ(load_error(with("\"64x64\"", "\"64by64\"")),
            "bad.yaml:14:22: error: 'gemm.tiles[1]': expected a CTA tile 'MxN' (1..4096 each), "
            "got '64by64'; e.g. \"128x256\"");
  EXPECT_EQ(load_error(with("forward: {64:", "forward: {hd64:")),
            "bad.yaml:22:13: error: expected a head dim (1..4096), got 'hd64'; map head dims "
            "to fractions, e.g. {64: 0.55, 128: 0.7}");
  EXPECT_EQ(load_error(with("causal_seq_factor: 2", "causal_seq_factor: 0.5")),
            "bad.yaml:25:22: error: 'attention.causal_seq_factor': expected a number in [1, 16]");
}

TEST(HwProfileErrors, FractionsAndCountsAreRangeChecked) {
  EXPECT_EQ(load_error(with("efficiency: 0.9\n", "efficiency: 1.3\n")),
            "bad.yaml:10:15: error: 'hbm.efficiency': expected a fraction in (0, 1], got 1.3");
  EXPECT_EQ(load_error(with("compute_units: 100", "compute_units: 0")),
            "bad.yaml:15:18: error: 'gemm.compute_units': expected an integer in [1, 100000], "
            "got 0");
  EXPECT_EQ(load_error(with("reserved: \"2 GiB\"", "reserved: \"90 GiB\"")),
            "bad.yaml:11:13: error: 'hbm.reserved': reserved memory (90.00 GiB) must be below "
            "the capacity (80.00 GiB)");
}

TEST(HwProfileErrors, MissingSectionsAndMismatchedNames) {
  EXPECT_EQ(load_error(with("collective: {launch: \"6 us\", step: \"1 us\"}\n", "")),
            "bad.yaml:1:1: error: missing required key 'collective'");
  EXPECT_EQ(load_error(with("  bf16: \"100 TFLOP/s\"\n", "")),
            "bad.yaml:4:3: error: 'peak': missing required key 'bf16'");
  EXPECT_EQ(load_error(with("name: bad", "name: good")),
            "bad.yaml:1:7: error: 'name': profile name 'good' does not match the file name "
            "'bad.yaml'; a profile is named after its file; rename one of them");
}

TEST(HwProfile, CollectiveTuningIsOptionalAndChecked) {
  Profile plain = profile_from_yaml(YamlNode::load_string(kValid, "bad.yaml"), "bad");
  EXPECT_FALSE(plain.collective.ll.enabled);
  EXPECT_FALSE(plain.collective.nvls.enabled);
  EXPECT_EQ(plain.collective.channels, 1);
  const std::string tuned =
      with(R"(collective: {launch: "6 us", step: "1 us"})",
           R"(collective: {launch: "6 us", step: "1 us", ll: {launch: "5 us", step: "0.6 us", )"
           R"(bandwidth: 0.5}, channels: 16, nvls: {latency: "25 us", efficiency: 0.7, )"
           R"(channels: 16, min_members: 5}})");
  Profile p = profile_from_yaml(YamlNode::load_string(tuned, "bad.yaml"), "bad");
  EXPECT_TRUE(p.collective.ll.enabled);
  EXPECT_EQ(p.collective.ll.launch, 5'000'000);
  EXPECT_DOUBLE_EQ(p.collective.ll.bandwidth, 0.5);
  EXPECT_EQ(p.collective.channels, 16);
  EXPECT_TRUE(p.collective.nvls.enabled);
  EXPECT_EQ(p.collective.nvls.min_members, 5);
  const std::string no_min = with(
      R"(collective: {launch: "6 us", step: "1 us"})",
      R"(collective: {launch: "6 us", step: "1 us", nvls: {latency: "25 us", efficiency: 0.7, )"
      R"(channels: 16}})");
  EXPECT_NE(load_error(no_min).find("min_members"), std::string::npos) << load_error(no_min);
  const std::string wide = with(R"(collective: {launch: "6 us", step: "1 us"})",
                                R"(collective: {launch: "6 us", step: "1 us", )"
                                R"(ll128: {launch: "5 us", step: "1 us", bandwidth: 1.5}})");
  EXPECT_NE(load_error(wide).find("1.5"), std::string::npos) << load_error(wide);
}

}  // namespace
}  // namespace tessera::hw
