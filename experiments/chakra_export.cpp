// SPDX-License-Identifier: Apache-2.0
#include "experiments/chakra_export.h"

#include <vector>

#include "graph/chakra/chakra_writer.h"
#include "graph/chakra/comm_groups.h"
#include "hwprofiles/hw_profile.h"
#include "interop/astra_config.h"
#include "sim/exec/sharing/group_classes.h"
#include "sim/exec/sharing/relabel.h"
#include "synth/build/synthesize.h"

namespace tessera::experiments {

namespace chakra = graph::chakra;

namespace {

// Rank r's graph: its class's, with groups and peers relabelled to r's own.
void write_instance(const graph::ExecGraph& g, const exec::GroupClasses& gc,
                    const exec::ClassRefs& refs, std::int32_t r, base::DType precision,
                    const std::string& prefix) {
  auto c = static_cast<std::size_t>(g.class_of_rank[static_cast<std::size_t>(r)]);
  exec::InstanceSpec spec = exec::relabel_instance(g, gc, refs, r);
  chakra::ExportOptions opts;
  opts.precision = precision;
  opts.group_of = [&spec](std::int32_t grp) { return spec.group(grp); };
  opts.peer_of = [&spec](std::int32_t peer) { return spec.peer(peer); };
  chakra::write_rank(g, g.classes[c], r, prefix, opts);
}

}  // namespace

ChakraExport export_chakra(const synth::Scenario& s, const std::string& prefix) {
  graph::ExecGraph g = synth::synthesize(s);
  exec::GroupClasses gc = exec::classify_groups(g);
  std::vector<exec::ClassRefs> refs;
  for (const graph::RankGraph& rg : g.classes) {
    refs.push_back(exec::class_refs(rg));
  }
  ChakraExport out{.ranks = g.num_ranks, .nodes = 0, .groups_path = "", .astra = false};
  for (std::int32_t r = 0; r < g.num_ranks; ++r) {
    auto c = static_cast<std::size_t>(g.class_of_rank[static_cast<std::size_t>(r)]);
    write_instance(g, gc, refs[c], r, s.training.precision, prefix);
    out.nodes += g.classes[c].size();
  }
  if (!g.groups.empty()) {
    out.groups_path = chakra::comm_groups_path(prefix);
    chakra::write_comm_groups(g, out.groups_path);
  }
  if (s.cluster.devices >= 2) {
    hw::Profile profile = synth::hardware_profile(s);
    interop::write_astra_configs(
        interop::astra_config(s.cluster.topology, profile, static_cast<int>(s.cluster.devices),
                              s.training.precision),
        prefix);
    out.astra = true;
  }
  return out;
}

}  // namespace tessera::experiments
