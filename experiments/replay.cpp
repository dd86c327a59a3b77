// SPDX-License-Identifier: Apache-2.0
#include "experiments/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "base/error.h"
#include "hwprofiles/hw_profile.h"
#include "measured/replay_graph.h"
#include "sim/simulation.h"
#include "topology/cluster.h"

namespace tessera::experiments {

namespace kineto = measured;

std::string profile_of_device(std::string_view device_name) {
  return hw::profile_for_device(device_name);
}

ReplayResult replay_iteration(const kineto::KinetoTrace& t, const kineto::IterationSet& set,
                              std::size_t iteration, const std::string& hardware,
                              const std::string& measured_on, const std::string& topology) {
  kineto::ReplayGraph rg = kineto::build_replay(t, set, iteration);
  ReplayResult r;
  r.measured_on = measured_on.empty() ? profile_of_device(t.device_name) : measured_on;
  const std::string target = hardware.empty() ? r.measured_on : hardware;
  // Without retiming the profile only sizes the cluster: any shipped one will do.
  hw::Profile profile = hw::load_profile(target.empty() ? "a100-sxm-80gb" : target);
  if (!hardware.empty()) {
    if (r.measured_on.empty()) {
      throw base::InputError(
          base::SourceLoc{t.path},
          fmt::format("cannot tell which hardware profile the trace was measured on (device "
                      "'{}'), so its durations cannot move to '{}'",
                      t.device_name, hardware),
          "pass --measured-on PROFILE");
    }
    hw::Profile source = hw::load_profile(r.measured_on);
    if (source.name != profile.name) {
      r.moved = measured::retime(rg.graph, source, profile, std::max(1, t.dist.world_size),
                                 kineto::kHostStream);
    }
  }
  topology::TopologySpec spec = topology::load_topology_preset(topology, {});
  topology::Cluster cluster(spec, profile, rg.graph.num_ranks);
  sim::SimOptions opt;
  opt.share_rank_classes = false;
  opt.record_timeline = true;  // the GPU's end comes from the spans
  r.stats = rg.stats;
  r.measured_s = static_cast<double>(rg.measured_ns) * 1e-9;
  r.run = sim::simulate(rg.graph, cluster, profile, opt);
  r.replayed_s = r.run.step_time_s;
  const auto& it = set.iterations.at(iteration);
  r.measured_gpu_end_s = static_cast<double>(it.gpu_end_ns - it.begin_ns) * 1e-9;
  for (const sim::Span& sp : r.run.spans) {
    if (sp.stream != kineto::kHostStream) {
      r.replayed_gpu_end_s = std::max(r.replayed_gpu_end_s, base::to_seconds(sp.end));
    }
  }
  r.graph = std::move(rg.graph);
  r.hardware = profile.name;
  return r;
}

}  // namespace tessera::experiments
