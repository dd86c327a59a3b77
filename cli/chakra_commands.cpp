// SPDX-License-Identifier: Apache-2.0
// The Chakra commands: `synth --chakra` (export every rank's graph, one rank in memory at a
// time), `inspect` (what one .et file holds) and `simulate --chakra` (time another tool's
// traces on a Tessera cluster).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/chakra_export.h"
#include "experiments/pipeline.h"
#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/critical_path.h"
#include "graph/chakra/et_order.h"
#include "graph/chakra/trace_summary.h"
#include "hwprofiles/hw_profile.h"
#include "sim/report/report.h"
#include "sim/simulation.h"
#include "topology/cluster.h"

namespace tessera::cli {

namespace chakra = graph::chakra;

int synth_chakra(const SynthArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  check_input_file("scenario", a.scenario);
  prepare_output_prefix("--chakra", a.chakra);
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  experiments::ChakraExport e = experiments::export_chakra(s, a.chakra);
  std::string astra =
      e.astra ? fmt::format("ASTRA-sim configs {0}.network.yml, {0}.system.json, {0}.memory.json",
                            a.chakra)
              : "no ASTRA-sim configs: its analytical network needs at least 2 NPUs";
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}: wrote {} Chakra traces ({} nodes) to {}.<rank>.et{} in {:.2f} s\n  {}\n", s.name,
             e.ranks, e.nodes, a.chakra, e.groups_path.empty() ? "" : " and " + e.groups_path, secs,
             astra);
  return 0;
}

namespace {

// An attribute's value in one short line (lists: the first few entries and the length).
std::string attr_text(const chakra::EtAttr& a) {
  constexpr std::size_t kShown = 8;
  switch (a.kind) {
    case chakra::AttrKind::kInt:
    case chakra::AttrKind::kBool:
      return std::to_string(a.int_val);
    case chakra::AttrKind::kFloat:
      return fmt::format("{:.6g}", a.float_val);
    case chakra::AttrKind::kString:
      return "'" + a.string_val + "'";
    case chakra::AttrKind::kList: {
      std::vector<std::int64_t> shown(
          a.int_list.begin(),
          a.int_list.begin() + static_cast<std::ptrdiff_t>(std::min(kShown, a.int_list.size())));
      return fmt::format("[{}{}] ({} entries)", fmt::join(shown, ", "),
                         a.int_list.size() > kShown ? ", ..." : "", a.int_list.size());
    }
    case chakra::AttrKind::kIntTooLarge:
      return "(integer above INT64_MAX)";
    case chakra::AttrKind::kNone:
      break;
  }
  return "(no value)";
}

}  // namespace

int inspect(const std::string& path) {
  check_input_file("Chakra trace", path);
  chakra::EtTrace t = chakra::read_et_file(path);
  chakra::TraceOrder order = chakra::order_trace(t);
  fmt::print("{}: Chakra execution trace, schema version {}\n", path,
             t.version.empty() ? "(none)" : t.version);
  for (const chakra::EtAttr& a : t.metadata) {
    fmt::print("  metadata {} = {} ({})\n", a.name, attr_text(a), a.variant);
  }
  const chakra::TraceSummary sum = chakra::summarize_trace(t);
  fmt::print("  {} nodes:", t.nodes.size());
  for (const auto& [k, n] : sum.node_types) {
    fmt::print(" {} {}", n, k);
  }
  fmt::print("\n");
  fmt::print("  compute: {:.4g} FLOPs in num_ops, {} in tensor_size\n",
             static_cast<double>(sum.num_ops),
             base::format_bytes(static_cast<double>(sum.tensor_bytes)));
  if (!sum.op_classes.empty()) {
    fmt::print("  compute by op class (tessera.node):");
    for (const auto& [op, n] : sum.op_classes) {
      fmt::print(" {} {}", n, op);
    }
    fmt::print("\n");
  }
  for (const auto& [type, c] : sum.collectives) {
    fmt::print("  {:<16} {:>6} collectives, {} in comm_size, {} group(s)\n", type, c.count,
               base::format_bytes(static_cast<double>(c.bytes)), c.groups.size());
  }
  for (const auto& [label, v] : {std::pair{"SEND", &sum.sends}, std::pair{"RECV", &sum.recvs}}) {
    if (v->count > 0) {
      fmt::print("  {:<16} {:>6} messages,    {} in comm_size\n", label, v->count,
                 base::format_bytes(static_cast<double>(v->bytes)));
    }
  }
  const chakra::CriticalPath cp = chakra::critical_path(t, order);
  fmt::print(
      "  critical path: {} nodes, {} us of recorded durations; heaviest chain {:.4g} "
      "FLOPs of num_ops\n",
      cp.nodes, cp.micros, static_cast<double>(cp.num_ops));
  return 0;
}

int simulate_chakra(const SimulateArgs& a) {
  check_profile_arg("--hardware", a.hardware);
  if (!a.out.empty()) {
    prepare_output_dir("--out", a.out);
  }
  chakra::ImportOptions opts;
  opts.use_durations = a.replay_durations;
  chakra::ImportInfo info;
  graph::ExecGraph g = chakra::read_chakra(a.chakra, opts, &info);
  hw::Profile profile = hw::load_profile(a.hardware);
  topology::TopologySpec spec = topology::load_topology_preset(a.topology, {});
  sim::SimOptions sopt;
  sopt.share_rank_classes = false;
  sopt.record_timeline = !a.out.empty();
  // ASTRA-sim's semantics unless asked otherwise; Tessera's own traces keep the NCCL-style
  // rendezvous and precision they were synthesized with, so they time as the direct run.
  sopt.eager_sends = !a.rendezvous && !info.tessera;
  sopt.dtype = info.precision;
  sim::report::RunLabel label{.scenario = a.chakra,
                              .model = "Chakra trace",
                              .hardware = profile.name,
                              .topology = a.topology,
                              .parallelism = fmt::format("{} ranks", g.num_ranks),
                              .schedule = "as recorded",
                              .devices = g.num_ranks,
                              .microbatches = 0,
                              .effects_off = {}};
  experiments::Outcome o =
      experiments::simulate_graph(std::move(g), profile, spec, sopt, std::move(label));
  sim::report::print_summary(std::cout, o.label, o.graph, o.stats, o.metrics);
  if (!a.out.empty()) {
    experiments::write_reports(a.out, o);
  }
  return 0;
}

}  // namespace tessera::cli
