// SPDX-License-Identifier: Apache-2.0
#include "interop/astra_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "topology/builders/builder.h"

namespace tessera::interop {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // the analytical backend's "GB"
constexpr double kPsPerNs = 1000.0;

double gbps(double bytes_per_s) {
  return bytes_per_s / kGiB;
}

double ns(base::SimTime t) {
  return static_cast<double>(t) / kPsPerNs;
}

// The scale-up dimension and how many devices one scale-up domain holds.
AstraDim scale_up_dim(const topology::BuildInputs& in, AstraConfig& c) {
  const std::string& kind = in.spec.kind;
  const hw::LinkSpec& up = in.scale_up;
  AstraDim d;
  d.latency_ns = ns(up.latency);
  d.implementation = "ring";
  if (kind == "hccs_mesh") {
    d.topology = "FullyConnected";
    d.npus = std::min(in.devices_per_node, in.num_devices);
    d.bandwidth = gbps(up.bandwidth * up.efficiency / (in.devices_per_node - 1));
    d.implementation = "direct";
    d.what = fmt::format("HCCS full mesh of the {} NPUs of a server, one link per pair", d.npus);
  } else if (kind == "ub_supernode") {
    d.topology = "Switch";
    d.npus = std::min(in.spec.supernode_size, in.num_devices);
    d.bandwidth = gbps(up.bandwidth * up.efficiency);
    d.what = fmt::format("Unified Bus supernode of {} chips (one non-blocking switch)", d.npus);
    c.lost.emplace_back(
        "the supernode's nodes: UB is one switch here as in Tessera, ASTRA-sim cannot "
        "place node boundaries inside it");
  } else {
    d.topology = "Switch";
    d.npus = std::min(in.devices_per_node, in.num_devices);
    d.bandwidth = gbps(up.bandwidth * up.efficiency);
    d.what = fmt::format("NVSwitch node of {} GPUs", d.npus);
  }
  return d;
}

// The fat tree over `domains` scale-up domains of `domain_size` devices each.
void scale_out_dims(const topology::BuildInputs& in, int domains, int domain_size, AstraConfig& c) {
  const topology::TopologySpec& spec = in.spec;
  const hw::LinkSpec& nic = in.scale_out;
  const hw::LinkSpec& fabric = in.fabric;
  // Domains whose same-rail devices share a leaf.
  const int per_leaf = std::max(1, spec.nodes_per_leaf * in.devices_per_node / domain_size);
  const double nic_bw = nic.bandwidth * nic.efficiency;
  const double spine_bw =
      std::min(nic_bw, nic.bandwidth / spec.oversubscription * fabric.efficiency);
  const double spine_latency = ns(nic.latency) + ns(fabric.latency);
  AstraDim leaf{"Switch", 0, gbps(nic_bw), ns(nic.latency), "ring", ""};
  AstraDim spine{"Switch", 0, gbps(spine_bw), spine_latency, "ring", ""};
  if (domains <= per_leaf) {
    leaf.npus = domains;
    leaf.what = fmt::format("{} scale-up domains under one leaf per rail: NIC links", domains);
    c.dims.push_back(leaf);
  } else if (domains % per_leaf == 0) {
    if (per_leaf > 1) {
      leaf.npus = per_leaf;
      leaf.what = fmt::format("{} scale-up domains under one leaf per rail: NIC links", per_leaf);
      c.dims.push_back(leaf);
    }
    spine.npus = domains / per_leaf;
    spine.what = fmt::format(
        "{} leaf groups joined by the spines: NIC / oversubscription {:g}, NIC + fabric latency",
        spine.npus, spec.oversubscription);
    c.dims.push_back(spine);
  } else {
    spine.npus = domains;
    spine.what = fmt::format(
        "{} scale-up domains across the spines (leaf groups of {} do not "
        "divide them): NIC / oversubscription, NIC + fabric latency",
        domains, per_leaf);
    c.dims.push_back(spine);
    c.lost.emplace_back(
        "which domains share a leaf: the groups do not divide the domains evenly, so every "
        "scale-out transfer is charged the spine path");
  }
  c.lost.emplace_back(
      "devices on different rails of different nodes: Tessera routes them leaf -> spine -> "
      "leaf (rail-optimized) or through the node's scale-up domain; ASTRA-sim goes "
      "dimension by dimension");
  if (spec.oversubscription > 1.0) {
    c.lost.emplace_back(fmt::format(
        "spine oversubscription {:g} as a shared bottleneck: the spine dimension gets each "
        "NIC's share of a leaf's uplinks, without contention between flows",
        spec.oversubscription));
  }
  c.lost.emplace_back(
      "the spine layer's shared, max-min fair bandwidth (the congestion-unaware backend has "
      "no contention)");
}

}  // namespace

AstraConfig astra_config(const topology::TopologySpec& spec, const hw::Profile& profile,
                         int num_devices, base::DType precision) {
  const topology::BuildInputs in = topology::resolve_build_inputs(spec, profile, num_devices);
  if (num_devices < 2) {
    throw base::InputError(spec.where, "ASTRA-sim's analytical network needs at least 2 NPUs",
                           fmt::format("the cluster has {} device", num_devices));
  }
  AstraConfig c;
  c.description = fmt::format("{} x {} on '{}' ({})", num_devices, profile.name,
                              spec.source.empty() ? spec.kind : spec.source, spec.kind);
  c.dims.push_back(scale_up_dim(in, c));
  const int domain = c.dims.front().npus;
  if (num_devices % domain != 0) {
    throw base::InputError(
        spec.where,
        fmt::format("{} devices are not whole scale-up domains of {}", num_devices, domain),
        "ASTRA-sim's dimensions multiply to the NPU count");
  }
  if (num_devices > domain) {
    scale_out_dims(in, num_devices / domain, domain, c);
  }
  double peak = profile.peak(precision);
  if (peak <= 0.0) {
    peak = profile.vector_flops;
  }
  c.peak_tflops = peak * profile.gemm.max_fraction / 1e12;
  c.local_mem_bw_gbps = profile.hbm_bandwidth * profile.hbm_efficiency / 1e9;
  c.endpoint_delay_ns = ns(profile.collective_step);
  c.lost.emplace_back(fmt::format(
      "per-collective launch cost ({:g} us): endpoint-delay carries only the per-step cost",
      ns(profile.collective_launch) / 1000.0));
  c.lost.emplace_back(fmt::format(
      "per-kernel launch ({:g} us), GEMM tile/wave efficiency, attention and vector-unit "
      "rates: the roofline uses one peak (dense {} x large-GEMM efficiency {:g})",
      ns(profile.launch.stream) / 1000.0, base::dtype_name(precision), profile.gemm.max_fraction));
  return c;
}

std::string astra_network_yaml(const AstraConfig& c) {
  std::string out = fmt::format(
      "# ASTRA-sim analytical network for {}, written by Tessera.\n"
      "# Dimensions, innermost first (bandwidth = link rate x collective efficiency, in GB/s\n"
      "# of 2^30 bytes as the backend counts; latency per link in ns):\n",
      c.description);
  for (std::size_t i = 0; i < c.dims.size(); ++i) {
    out += fmt::format("#   dim {}: {}\n", i, c.dims[i].what);
  }
  out += "# Not expressible in this format:\n";
  for (const std::string& l : c.lost) {
    out += "#   - " + l + "\n";
  }
  std::string topo;
  std::string npus;
  std::string bw;
  std::string lat;
  for (std::size_t i = 0; i < c.dims.size(); ++i) {
    const char* sep = i == 0 ? " " : ", ";
    topo += sep + c.dims[i].topology;
    npus += fmt::format("{}{}", sep, c.dims[i].npus);
    bw += fmt::format("{}{:.6g}", sep, c.dims[i].bandwidth);
    lat += fmt::format("{}{:.6g}", sep, c.dims[i].latency_ns);
  }
  out += fmt::format(
      "topology: [{} ]\nnpus_count: [{} ]\nbandwidth: [{} ]  # GB/s\n"
      "latency: [{} ]  # ns\n",
      topo, npus, bw, lat);
  return out;
}

std::string astra_system_json(const AstraConfig& c) {
  nlohmann::ordered_json impl = nlohmann::ordered_json::array();
  for (const AstraDim& d : c.dims) {
    impl.push_back(d.implementation);
  }
  nlohmann::ordered_json j;
  j["scheduling-policy"] = "FIFO";  // Tessera runs each stream's collectives in issue order
  j["endpoint-delay"] = static_cast<std::int64_t>(std::llround(c.endpoint_delay_ns));
  j["active-chunks-per-dimension"] = 1;
  j["preferred-dataset-splits"] = 4;
  j["all-reduce-implementation"] = impl;
  j["all-gather-implementation"] = impl;
  j["reduce-scatter-implementation"] = impl;
  j["all-to-all-implementation"] = impl;
  j["collective-optimization"] = "localBWAware";
  j["local-mem-bw"] = c.local_mem_bw_gbps;
  j["boost-mode"] = 0;
  j["roofline-enabled"] = 1;
  j["peak-perf"] = c.peak_tflops;
  // ASTRA-sim 518bd51 frees a communicator group twice while tearing down (exit 134 after the
  // ranks finished) unless tracing is on; with it on, runs end cleanly. It only adds log lines.
  j["trace-enabled"] = 1;
  return j.dump(4) + "\n";
}

std::string astra_memory_json() {
  return "{\n    \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n";
}

void write_astra_configs(const AstraConfig& c, const std::string& prefix) {
  const std::pair<std::string, std::string> files[] = {
      {prefix + ".network.yml", astra_network_yaml(c)},
      {prefix + ".system.json", astra_system_json(c)},
      {prefix + ".memory.json", astra_memory_json()},
  };
  for (const auto& [path, text] : files) {
    std::ofstream out(path, std::ios::trunc);
    if (!(out << text)) {
      throw base::InputError(base::SourceLoc{path}, "cannot write the ASTRA-sim config file");
    }
  }
}

}  // namespace tessera::interop
