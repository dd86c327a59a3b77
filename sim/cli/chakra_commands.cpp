// SPDX-License-Identifier: Apache-2.0
// The Chakra commands: `synth --chakra` (export every rank's graph, one rank in memory at a
// time), `inspect` (what one .et file holds) and `simulate --chakra` (time another tool's
// traces on a Tessera cluster).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>

#include "hwprofiles/hw_profile.h"
#include "sim/base/error.h"
#include "sim/cli/commands.h"
#include "sim/cli/pipeline.h"
#include "sim/exec/group_classes.h"
#include "sim/exec/relabel.h"
#include "sim/report/report.h"
#include "sim/simulation.h"
#include "synth/graph/chakra/chakra_reader.h"
#include "synth/graph/chakra/chakra_writer.h"
#include "synth/graph/chakra/comm_groups.h"
#include "synth/graph/chakra/et_order.h"
#include "synth/synthesize.h"
#include "topology/cluster.h"

namespace tessera::cli {

namespace chakra = graph::chakra;

namespace {

void make_parent_dir(const std::string& prefix) {
  std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent);
  }
}

}  // namespace

int synth_chakra(const SynthArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  graph::ExecGraph g = synth::synthesize(s);
  make_parent_dir(a.chakra);
  exec::GroupClasses gc = exec::classify_groups(g);
  std::vector<exec::ClassRefs> refs;
  for (const graph::RankGraph& rg : g.classes) {
    refs.push_back(exec::class_refs(rg));
  }
  std::size_t nodes = 0;
  for (std::int32_t r = 0; r < g.num_ranks; ++r) {
    auto c = static_cast<std::size_t>(g.class_of_rank[static_cast<std::size_t>(r)]);
    exec::InstanceSpec spec = exec::relabel_instance(g, gc, refs[c], r);
    chakra::ExportOptions opts;
    opts.group_of = [&spec](std::int32_t grp) { return spec.group(grp); };
    opts.peer_of = [&spec](std::int32_t peer) { return spec.peer(peer); };
    chakra::write_rank(g, g.classes[c], r, a.chakra, opts);
    nodes += g.classes[c].size();
  }
  if (!g.groups.empty()) {
    chakra::write_comm_groups(g, chakra::comm_groups_path(a.chakra));
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}: wrote {} Chakra traces ({} nodes) to {}.<rank>.et{} in {:.2f} s\n", s.name,
             g.num_ranks, nodes, a.chakra,
             g.groups.empty() ? "" : " and " + chakra::comm_groups_path(a.chakra), secs);
  return 0;
}

namespace {

// The longest dependency chain: its node count and, where durations are recorded, its time.
std::pair<std::size_t, std::uint64_t> critical_path(const chakra::EtTrace& t,
                                                    const chakra::TraceOrder& o) {
  std::vector<std::size_t> len(t.nodes.size(), 0);
  std::vector<std::uint64_t> time(t.nodes.size(), 0);
  std::size_t best_len = 0;
  std::uint64_t best_time = 0;
  for (std::size_t pos : o.order) {
    std::size_t l = 0;
    std::uint64_t d = 0;
    for (const chakra::TraceDep& dep : o.deps[pos]) {
      l = std::max(l, len[dep.pos]);
      d = std::max(d, time[dep.pos]);
    }
    len[pos] = l + 1;
    time[pos] = d + t.nodes[pos].duration_micros;
    best_len = std::max(best_len, len[pos]);
    best_time = std::max(best_time, time[pos]);
  }
  return {best_len, best_time};
}

}  // namespace

int inspect(const std::string& path) {
  chakra::EtTrace t = chakra::read_et_file(path);
  chakra::TraceOrder order = chakra::order_trace(t);
  fmt::print("{}: Chakra execution trace, schema version {}\n", path,
             t.version.empty() ? "(none)" : t.version);
  for (const chakra::EtAttr& a : t.metadata) {
    fmt::print("  metadata {} ({})\n", a.name, a.variant);
  }
  std::map<std::string, std::size_t> kinds;
  std::map<std::string, std::pair<std::size_t, std::int64_t>> colls;  // type -> count, bytes
  for (const chakra::EtNode& n : t.nodes) {
    ++kinds[std::string(chakra::et_node_type_name(n.type))];
    if (n.type == static_cast<int>(chakra::EtNodeType::kCommColl)) {
      auto type = chakra::int_attr(t, n, "comm_type").value_or(-1);
      auto& c = colls[std::string(chakra::et_coll_type_name(static_cast<int>(type)))];
      ++c.first;
      c.second += chakra::int_attr(t, n, "comm_size").value_or(0);
    }
  }
  fmt::print("  {} nodes:", t.nodes.size());
  for (const auto& [k, n] : kinds) {
    fmt::print(" {} {}", n, k);
  }
  fmt::print("\n");
  for (const auto& [type, c] : colls) {
    fmt::print("  {:<16} {:>6} collectives, {} in comm_size\n", type, c.first,
               base::format_bytes(static_cast<double>(c.second)));
  }
  auto [len, micros] = critical_path(t, order);
  fmt::print("  critical path: {} nodes, {} us of recorded durations\n", len, micros);
  return 0;
}

int simulate_chakra(const SimulateArgs& a) {
  chakra::ImportOptions opts;
  opts.use_durations = a.replay_durations;
  graph::ExecGraph g = chakra::read_chakra(a.chakra, opts);
  hw::Profile profile = hw::load_profile(a.hardware);
  topology::TopologySpec spec = topology::load_topology_preset(a.topology, {});
  topology::Cluster cluster(spec, profile, g.num_ranks);
  sim::SimOptions sopt;
  sopt.share_rank_classes = false;
  sopt.record_timeline = !a.out.empty();
  sopt.eager_sends = !a.rendezvous;  // ASTRA-sim's semantics unless asked otherwise
  sim::RunStats r = sim::simulate(g, cluster, profile, sopt);
  Outcome o;
  o.label.scenario = a.chakra;
  o.label.model = "Chakra trace";
  o.label.hardware = profile.name;
  o.label.topology = a.topology;
  o.label.parallelism = fmt::format("{} ranks", g.num_ranks);
  o.label.schedule = "as recorded";
  o.label.devices = g.num_ranks;
  o.metrics = sim::report::compute_metrics(g, r, g.num_ranks);
  o.stats = std::move(r);
  o.graph = std::move(g);
  sim::report::print_summary(std::cout, o.label, o.graph, o.stats, o.metrics);
  if (!a.out.empty()) {
    write_reports(a.out, o);
  }
  return 0;
}

}  // namespace tessera::cli
