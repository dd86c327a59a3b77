// SPDX-License-Identifier: Apache-2.0
// ASTRA-sim input files that describe a Tessera cluster, written beside the Chakra traces:
// the analytical network backend's YAML (one entry per dimension, innermost first) and the
// system layer's JSON (collective algorithms per dimension, roofline compute).
#pragma once

#include <string>
#include <vector>

#include "hwprofiles/hw_profile.h"
#include "topology/cluster.h"

namespace tessera::interop {

// One dimension of ASTRA-sim's multi-dimensional network. NPU n sits at coordinate
// (n mod npus[0], n / npus[0] mod npus[1], ...); a dimension joins NPUs that differ only in
// its coordinate.
struct AstraDim {
  std::string topology;        // "Switch", "FullyConnected" or "Ring"
  int npus = 0;                // NPUs along this dimension (> 1)
  double bandwidth = 0.0;      // GB/s as the analytical backend counts it (2^30 B/s), per link
                               // per direction: the link rate x the collective efficiency
  double latency_ns = 0.0;     // per link; a Switch path is 2 links, FullyConnected 1
  std::string implementation;  // collective algorithm: "ring" or "direct"
  std::string what;            // what it stands for, for the YAML comment
};

struct AstraConfig {
  std::string description;         // the cluster in words
  std::vector<AstraDim> dims;      // innermost (scale-up) first; product = NPUs
  std::vector<std::string> lost;   // what the format cannot express
  double peak_tflops = 0.0;        // roofline peak: dense peak x large-GEMM efficiency
  double local_mem_bw_gbps = 0.0;  // HBM bandwidth x efficiency, in 10^9 B/s
  double endpoint_delay_ns = 0.0;  // per message: the profile's collective step cost
};

// Contract: maps `spec` on `num_devices` devices of `profile` to ASTRA-sim's dimensions:
//   nvswitch_fat_tree  dim 0 Switch(devices per node), scale-up link
//   hccs_mesh          dim 0 FullyConnected(devices per node), scale-up / (n - 1) per link
//   ub_supernode       dim 0 Switch(chips per supernode), scale-up link
// then, when there are several scale-up domains, the rail-optimized fat tree: one Switch
// dimension over the domains under one leaf (NIC link, its latency per link), and one over
// the leaf groups (NIC / oversubscription, NIC + fabric latency per link); a single
// dimension when all domains share a leaf or the groups do not divide evenly. Throws
// base::InputError (at spec.where) when the cluster is invalid or has fewer than 2 devices
// (the analytical backend needs at least 2 NPUs per dimension).
AstraConfig astra_config(const topology::TopologySpec& spec, const hw::Profile& profile,
                         int num_devices, base::DType precision);

// The analytical backend's network file: a comment header (the cluster, each dimension,
// what could not be expressed) and topology / npus_count / bandwidth / latency lists.
std::string astra_network_yaml(const AstraConfig& c);
// The system layer's JSON: scheduling, chunking, per-dimension collective implementations,
// local memory bandwidth and the roofline compute model.
std::string astra_system_json(const AstraConfig& c);
// The remote-memory file ASTRA-sim also requires: {"memory-type": "NO_MEMORY_EXPANSION"}.
std::string astra_memory_json();

// Writes <prefix>.network.yml, <prefix>.system.json and <prefix>.memory.json; throws
// base::InputError naming a file that cannot be written.
void write_astra_configs(const AstraConfig& c, const std::string& prefix);

}  // namespace tessera::interop
