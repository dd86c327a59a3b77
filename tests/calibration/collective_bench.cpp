// SPDX-License-Identifier: Apache-2.0
#include "tests/calibration/collective_bench.h"

#include "base/error.h"
#include "hwprofiles/hw_profile.h"
#include "tests/sim/sim_test_util.h"
#include "topology/cluster.h"

namespace tessera::calibration {

double busbw_factor(graph::CollType type, int n) {
  const double nd = n;
  return type == graph::CollType::kAllReduce ? 2.0 * (nd - 1.0) / nd : (nd - 1.0) / nd;
}

BenchResult run_collective(const BenchSetup& setup, double bytes) {
  hw::Profile profile = hw::load_profile(setup.profile);
  profile.collective.nvls.enabled = profile.collective.nvls.enabled && setup.nvls;
  const topology::TopologySpec spec =
      topology::load_topology_preset(setup.topology, base::SourceLoc{"test", 0, 0});
  const topology::Cluster cluster(spec, profile, setup.devices);
  graph::ExecGraph g;
  std::vector<graph::RankGraph> graphs(static_cast<std::size_t>(setup.devices));
  for (int k = 0; k < setup.groups; ++k) {
    graph::Group group;
    for (int i = 0; i < setup.size; ++i) {
      group.ranks.push_back(setup.stride > 1 ? k + i * setup.stride : k * setup.size + i);
    }
    g.groups.push_back(group);
    for (std::int32_t r : group.ranks) {
      graphs[static_cast<std::size_t>(r)].add(simtest::collective(g, "coll", k, setup.type, bytes));
    }
  }
  simtest::set_per_rank(g, graphs);
  const sim::RunStats s = sim::simulate(g, cluster, profile, setup.options);
  BenchResult r;
  r.time_s = s.step_time_s;
  r.algbw_gbps = bytes / r.time_s / 1e9;
  r.busbw_gbps = r.algbw_gbps * busbw_factor(setup.type, setup.size);
  return r;
}

}  // namespace tessera::calibration
