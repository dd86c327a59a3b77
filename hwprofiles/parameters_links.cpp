// SPDX-License-Identifier: Apache-2.0
// The profile keys of the node and the fabric: devices per node, the scale-up and scale-out
// links, the collective library's protocols (docs/collectives.md), FP8 operand layout and how
// traces and runs files name the part.
#include <fmt/format.h>

#include <limits>
#include <vector>

#include "hwprofiles/parameter_builders.h"

namespace tessera::hw {

namespace {

using namespace table;  // NOLINT(google-build-using-namespace): the table's vocabulary
using base::YamlNode;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kSpec = "spec sheet (docs/hardware.md)";
constexpr const char* kNccl = "fitted to collectives.yaml and NCCL's tuner (docs/collectives.md)";

void read_names(const YamlNode& node, Profile& p) {
  if (!node.is_seq()) {
    node.fail("expected a list of device names", "e.g. [\"H100 SXM\", \"H100 80GB\"]");
  }
  p.device_names.clear();
  for (const YamlNode& item : node.items()) {
    p.device_names.push_back(item.as_string());
    if (p.device_names.back().empty()) {
      item.fail("expected a non-empty device name");
    }
  }
}

std::string write_names(const Profile& p) {
  std::string out;
  for (const std::string& n : p.device_names) {
    out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", n);
  }
  return "[" + out + "]";
}

using D = Dimension;

// The node and its links.
std::vector<Parameter> link_keys() {
  return {
      integer("devices_per_node", 1, 4096, true, "devices in one scale-up domain", kSpec,
              field<[](auto& p) -> auto& { return p.devices_per_node; }>()),
      quantity("scale_up.bandwidth", D::kBandwidth, 1, kInf, true,
               "scale-up (NVLink, HCCS) bandwidth per device, one direction", kSpec,
               field<[](auto& p) -> auto& { return p.scale_up.bandwidth; }>()),
      quantity("scale_up.latency", D::kTime, 0, 1e-3, true, "per hop", kSpec,
               time_field<[](auto& p) -> auto& { return p.scale_up.latency; }>()),
      fitted(fraction("scale_up.efficiency", true,
                      "fraction of the scale-up bandwidth collectives achieve", kNccl,
                      field<[](auto& p) -> auto& { return p.scale_up.efficiency; }>())),
      quantity("scale_out.bandwidth", D::kBandwidth, 1, kInf, true,
               "scale-out NIC bandwidth per device, one direction", kSpec,
               field<[](auto& p) -> auto& { return p.scale_out.bandwidth; }>()),
      quantity("scale_out.latency", D::kTime, 0, 1e-3, true, "per hop, NIC included", kSpec,
               time_field<[](auto& p) -> auto& { return p.scale_out.latency; }>()),
      fitted(fraction("scale_out.efficiency", true,
                      "fraction of the NIC bandwidth collectives achieve", kNccl,
                      field<[](auto& p) -> auto& { return p.scale_out.efficiency; }>())),
  };
}

// The collective library (docs/collectives.md).
std::vector<Parameter> collective_keys() {
  return {
      quantity("collective.launch", D::kTime, 0, 1e-2, true,
               "fixed cost per collective call, Simple protocol", kNccl,
               time_field<[](auto& p) -> auto& { return p.collective_launch; }>()),
      quantity("collective.step", D::kTime, 0, 1e-2, true,
               "protocol cost per algorithm step on top of the link latency", kNccl,
               time_field<[](auto& p) -> auto& { return p.collective_step; }>()),
      in_group(quantity("collective.ll.launch", D::kTime, 0, 1e-2, true, "LL: cost per call", kNccl,
                        time_field<[](auto& p) -> auto& { return p.collective.ll.launch; }>()),
               "collective.ll"),
      in_group(quantity("collective.ll.step", D::kTime, 0, 1e-2, true, "LL: cost per step", kNccl,
                        time_field<[](auto& p) -> auto& { return p.collective.ll.step; }>()),
               "collective.ll"),
      in_group(fraction("collective.ll.bandwidth", true,
                        "LL: fraction of the Simple protocol's bandwidth", kNccl,
                        field<[](auto& p) -> auto& { return p.collective.ll.bandwidth; }>()),
               "collective.ll"),
      in_group(
          quantity("collective.ll128.launch", D::kTime, 0, 1e-2, true, "LL128: cost per call",
                   kNccl, time_field<[](auto& p) -> auto& { return p.collective.ll128.launch; }>()),
          "collective.ll128"),
      in_group(
          quantity("collective.ll128.step", D::kTime, 0, 1e-2, true, "LL128: cost per step", kNccl,
                   time_field<[](auto& p) -> auto& { return p.collective.ll128.step; }>()),
          "collective.ll128"),
      in_group(fraction("collective.ll128.bandwidth", true,
                        "LL128: fraction of the Simple protocol's bandwidth", kNccl,
                        field<[](auto& p) -> auto& { return p.collective.ll128.bandwidth; }>()),
               "collective.ll128"),
      integer("collective.channels", 0, 1024, false,
              "CTAs (one SM each) a ring or direct collective occupies", kNccl,
              field<[](auto& p) -> auto& { return p.collective.channels; }>()),
      in_group(quantity("collective.nvls.latency", D::kTime, 0, 1e-2, true,
                        "NVLink SHARP: cost per call, all in", kNccl,
                        time_field<[](auto& p) -> auto& { return p.collective.nvls.latency; }>()),
               "collective.nvls"),
      in_group(fraction("collective.nvls.efficiency", true,
                        "NVLink SHARP: fraction of the link's achieved rate", kNccl,
                        field<[](auto& p) -> auto& { return p.collective.nvls.efficiency; }>()),
               "collective.nvls"),
      in_group(integer("collective.nvls.channels", 1, 1024, true,
                       "NVLink SHARP: CTAs the kernel occupies", kNccl,
                       field<[](auto& p) -> auto& { return p.collective.nvls.channels; }>()),
               "collective.nvls"),
      in_group(integer("collective.nvls.min_members", 2, 1024, true,
                       "NVLink SHARP: the smallest group NCCL runs it for", kNccl,
                       field<[](auto& p) -> auto& { return p.collective.nvls.min_members; }>()),
               "collective.nvls"),
  };
}

// FP8 operand layout, and how the part is named and shipped.
std::vector<Parameter> naming_keys() {
  return {
      flag("fp8_transpose",
           "FP8 GEMMs read both operands K-major only (Hopper), so FP8 training keeps "
           "transposed copies; required exactly when peak.fp8 is given",
           "docs/hardware.md §1.1", flag_field<[](auto& p) -> auto& { return p.fp8_transpose; }>()),
      flag("mxfp8",
           "the tensor cores apply MX block scales (E8M0 per 32 elements) in the MMA, so "
           "fp8_recipe: mxfp8 runs (Blackwell), at gemm.mxfp8_rate of the FP8 rate",
           "docs/hardware.md §1.1", flag_field<[](auto& p) -> auto& { return p.mxfp8; }>()),
      custom("device_names", false,
             "how traces and runs files name the part: substrings, the longest match winning", "",
             &read_names, &write_names),
      custom(
          "topology", false, "the topology preset of the system the part ships in", "",
          [](const YamlNode& n, Profile& p) { p.topology = n.as_string(); },
          [](const Profile& p) { return p.topology; }),
  };
}

std::vector<Parameter> build() {
  std::vector<Parameter> out = link_keys();
  for (auto part : {collective_keys(), naming_keys()}) {
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace

std::span<const Parameter> link_parameters() {
  static const std::vector<Parameter> kTable = build();
  return kTable;
}

}  // namespace tessera::hw
