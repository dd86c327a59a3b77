// SPDX-License-Identifier: Apache-2.0
// YAML document -> hw::Profile. Every key is required unless noted, every quantity needs a
// unit, and every rejected value is reported at its own file:line:col.
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "base/yaml_reader.h"
#include "hwprofiles/attention_model.h"
#include "hwprofiles/collective_yaml.h"
#include "hwprofiles/compute_yaml.h"
#include "hwprofiles/hw_profile.h"
#include "hwprofiles/link_spec_yaml.h"

namespace tessera::hw {

namespace {

using base::Dimension;
using base::YamlNode;

constexpr std::array<std::string_view, 15> kTopKeys = {
    "name",      "description", "peak",          "vector_flops",     "hbm",
    "gemm",      "attention",   "launch",        "devices_per_node", "scale_up",
    "scale_out", "collective",  "fp8_transpose", "device_names",     "topology"};
constexpr std::array<std::string_view, 5> kHbmKeys = {"capacity", "bandwidth", "efficiency",
                                                      "half_size", "reserved"};

int read_count(const YamlNode& node, std::int64_t max) {
  return static_cast<int>(node.as_int(1, max));
}

void check_name(const YamlNode& root, const std::string& name) {
  auto given = root.find("name");
  if (given && given->as_string() != name) {
    given->fail(fmt::format("profile name '{}' does not match the file name '{}.yaml'",
                            given->as_string(), name),
                "a profile is named after its file; rename one of them");
  }
}

void read_peaks(const YamlNode& node, Profile& p) {
  std::array<std::string_view, kNumDTypes> names{};
  for (int i = 0; i < kNumDTypes; ++i) {
    names[static_cast<std::size_t>(i)] = base::dtype_name(static_cast<DType>(i));
  }
  node.check_keys(names);
  (void)node.at("bf16");  // every part we model has a bf16 matrix path; others are optional
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (auto rate = node.find(names[i])) {
      p.peak_flops[i] = rate->as_quantity(Dimension::kFlopRate);
    }
  }
}

void read_hbm(const YamlNode& node, Profile& p) {
  node.check_keys(kHbmKeys);
  p.hbm_capacity = node.at("capacity").as_quantity(Dimension::kBytes);
  p.hbm_bandwidth = node.at("bandwidth").as_quantity(Dimension::kBandwidth);
  p.hbm_efficiency = read_fraction(node.at("efficiency"));
  p.hbm_half_bytes = node.at("half_size").as_quantity(Dimension::kBytes, true);
  auto reserved = node.at("reserved");
  p.reserved_memory = reserved.as_quantity(Dimension::kBytes, true);
  if (p.reserved_memory >= p.hbm_capacity) {
    reserved.fail(fmt::format("reserved memory ({}) must be below the capacity ({})",
                              base::format_bytes(p.reserved_memory),
                              base::format_bytes(p.hbm_capacity)));
  }
}

// fp8_transpose goes with an FP8 peak: required with one, rejected without.
void read_fp8_layout(const YamlNode& root, Profile& p) {
  auto given = root.find("fp8_transpose");
  bool has_fp8 = p.peak(DType::kFP8) > 0.0;
  if (has_fp8 && !given) {
    root.at("peak").at("fp8").fail(
        "a part with an fp8 peak needs the key 'fp8_transpose' (true: FP8 GEMMs read both "
        "operands K-major only, as on Hopper; false: either layout, as on Blackwell)");
  }
  if (given && !has_fp8) {
    given->fail("this describes FP8 GEMMs, but the part has no peak.fp8");
  }
  p.fp8_transpose = given && given->as_bool();
}

// `device_names`: a list of non-empty strings (optional).
std::vector<std::string> read_device_names(const YamlNode& root) {
  std::vector<std::string> out;
  auto names = root.find("device_names");
  if (!names) {
    return out;
  }
  if (!names->is_seq()) {
    names->fail("expected a list of device names", "e.g. [\"H100 SXM\", \"H100 80GB\"]");
  }
  for (const YamlNode& item : names->items()) {
    out.push_back(item.as_string());
    if (out.back().empty()) {
      item.fail("expected a non-empty device name");
    }
  }
  return out;
}

}  // namespace

Profile profile_from_yaml(const YamlNode& root, const std::string& name) {
  root.check_keys(kTopKeys);
  check_name(root, name);
  Profile p;
  p.name = name;
  p.description = root.at("description").as_string();
  read_peaks(root.at("peak"), p);
  p.vector_flops = root.at("vector_flops").as_quantity(Dimension::kFlopRate);
  read_hbm(root.at("hbm"), p);
  read_gemm(root.at("gemm"), p.gemm);
  read_attention(root.at("attention"), p.attention);
  p.attention_fraction = attention_fraction_fwd_bwd(p.attention);
  read_launch(root.at("launch"), p.launch);
  p.devices_per_node = read_count(root.at("devices_per_node"), 4096);
  p.scale_up = read_link_spec(root.at("scale_up"), LinkFields::kRequired);
  p.scale_out = read_link_spec(root.at("scale_out"), LinkFields::kRequired);
  read_collective_section(root.at("collective"), p);
  read_fp8_layout(root, p);
  p.device_names = read_device_names(root);
  if (auto t = root.find("topology")) {
    p.topology = t->as_string();
  }
  return p;
}

}  // namespace tessera::hw
