// SPDX-License-Identifier: Apache-2.0
// A simulated nccl-tests run: `groups` groups of `size` consecutive devices each run one
// collective of `bytes` at once (XLA's "g x n" replica groups), on a cluster of a shipped
// profile and topology preset. Returns the collective's time and the bus bandwidth
// nccl-tests would print for it.
#pragma once

#include <string>

#include "graph/exec_graph.h"
#include "sim/simulation.h"

namespace tessera::calibration {

struct BenchSetup {
  std::string profile;  // hwprofiles/<name>.yaml
  std::string topology = "single-node";
  int devices = 8;
  int groups = 1;
  int size = 8;    // members per group
  int stride = 1;  // member i of group g is device g + i * stride (stride > 1)
                   // or g * size + i (stride 1)
  graph::CollType type = graph::CollType::kAllReduce;
  bool nvls = true;  // false: the profile's in-switch reduction off (NCCL_NVLS_ENABLE=0)
  sim::SimOptions options;
};

struct BenchResult {
  double time_s = 0.0;
  double busbw_gbps = 0.0;
  double algbw_gbps = 0.0;
};

BenchResult run_collective(const BenchSetup& setup, double bytes);

// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce, (n-1)/n otherwise.
double busbw_factor(graph::CollType type, int n);

}  // namespace tessera::calibration
