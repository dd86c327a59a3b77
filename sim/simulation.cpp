// SPDX-License-Identifier: Apache-2.0
// Wiring: validate -> plan instances -> register network paths -> run the kernel with the
// executor and the network model -> report deadlocks or turn instance accounts into RunStats.
#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "base/error.h"
#include "sim/exec/comm_paths.h"
#include "sim/exec/deadlock_report.h"
#include "sim/exec/executor.h"
#include "sim/exec/graph_check.h"
#include "sim/exec/graph_index.h"
#include "sim/exec/sent_bytes.h"
#include "sim/exec/sharing/sharing_plan.h"
#include "sim/kernel/scheduler.h"
#include "sim/models/collective/flow_routing.h"
#include "sim/models/compute/compute_model.h"
#include "sim/models/network/network_model.h"
#include "sim/models/network/path_table.h"
#include "sim/timeline_pick.h"

namespace tessera::sim {

namespace {

std::vector<exec::GraphIndex> index_classes(const graph::ExecGraph& graph,
                                            const exec::SharingPlan& plan) {
  std::vector<char> used(graph.classes.size(), 0);
  for (const exec::InstanceSpec& spec : plan.instances) {
    used[static_cast<std::size_t>(spec.cls)] = 1;
  }
  std::vector<exec::GraphIndex> index(graph.classes.size());
  for (std::size_t c = 0; c < graph.classes.size(); ++c) {
    if (used[c] != 0) {
      index[c] = exec::build_graph_index(graph.classes[c], plan);
    }
  }
  return index;
}

// Integer parts, so that they sum to the peak exactly: static memory by kind, the
// communication buffers held at the peak, and the rest (activations).
MemoryBreakdown peak_breakdown(const exec::InstanceState& s) {
  const graph::RankGraph& g = *s.graph;
  MemoryBreakdown b;
  b.weights = static_cast<double>(g.weight_memory);
  b.gradients = static_cast<double>(g.grad_memory);
  b.optimizer = static_cast<double>(g.static_memory - g.weight_memory - g.grad_memory);
  b.comm_buffers = static_cast<double>(s.peak_comm);
  b.activations = static_cast<double>(s.peak_memory - g.static_memory - s.peak_comm);
  return b;
}

RankStats rank_stats(const exec::InstanceState& s, std::int32_t rank, base::SimTime step,
                     base::SimTime host, double usable_memory) {
  RankStats r;
  r.rank = rank;
  r.stage = s.graph->stage;
  r.end_s = base::to_seconds(s.end);
  r.compute_s = base::to_seconds(s.busy.compute());
  base::SimTime idle = step - s.busy.compute() - s.busy.host_wait() - host;
  r.host_wait_s = base::to_seconds(s.busy.host_wait());
  for (int k = 0; k < graph::kNumGroupKinds; ++k) {
    r.comm_s[static_cast<std::size_t>(k)] = base::to_seconds(s.busy.comm(k));
    r.exposed_comm_s[static_cast<std::size_t>(k)] = base::to_seconds(s.busy.exposed(k));
    idle -= s.busy.exposed(k);
  }
  r.idle_s = base::to_seconds(idle);
  r.flops = s.flops;
  for (std::size_t c = 0; c < r.compute_by_class_s.size(); ++c) {
    r.compute_by_class_s[c] = base::to_seconds(s.compute_by_class[c]);
  }
  r.peak_memory = static_cast<double>(s.peak_memory);
  r.static_memory = static_cast<double>(s.graph->static_memory);
  r.oom = r.peak_memory > usable_memory;
  r.peak_breakdown = peak_breakdown(s);
  return r;
}

// Each rank's position in its TP and DP groups (ring order), for ranks.csv.
void group_positions(const graph::ExecGraph& graph, std::vector<RankStats>& ranks) {
  for (const graph::Group& grp : graph.groups) {
    if (grp.kind != graph::GroupKind::kTP && grp.kind != graph::GroupKind::kDP) {
      continue;
    }
    for (std::size_t i = 0; i < grp.ranks.size(); ++i) {
      RankStats& k = ranks[static_cast<std::size_t>(grp.ranks[i])];
      (grp.kind == graph::GroupKind::kTP ? k.tp_index : k.dp_index) = static_cast<std::int32_t>(i);
    }
  }
}

RunStats collect(const graph::ExecGraph& graph, const exec::SharingPlan& plan,
                 exec::Executor& executor, const hw::Profile& profile, const SimOptions& options) {
  const auto& instances = executor.instances();
  RunStats out;
  base::SimTime step = 0;
  for (const exec::InstanceState& s : instances) {
    step = std::max(step, s.end);
  }
  step += profile.under_load.step;
  out.step_time_s = base::to_seconds(step);
  out.host_step_s = base::to_seconds(profile.under_load.step);
  out.hbm_capacity = profile.hbm_capacity - profile.reserved_memory;
  out.peak_flops = profile.peak_flops[static_cast<std::size_t>(options.dtype)];
  out.simulated_ranks = static_cast<std::int32_t>(instances.size());
  out.sharing_fallback = plan.fallback_reason;
  out.expert_loads = !graph.expert_loads.empty();
  out.ranks.reserve(static_cast<std::size_t>(graph.num_ranks));
  const std::vector<exec::SentBytes> sent = exec::sent_bytes_per_class(graph);
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    auto inst = static_cast<std::size_t>(plan.instance_of_rank[static_cast<std::size_t>(r)]);
    out.ranks.push_back(
        rank_stats(instances[inst], r, step, profile.under_load.step, out.hbm_capacity));
    out.ranks.back().sent_bytes =
        sent[static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(r)])];
    if (!graph.expert_loads.empty()) {
      const auto i = static_cast<std::size_t>(r);
      out.ranks.back().expert_load = graph.expert_loads.mean_load[i];
      out.ranks.back().expert_load_max = graph.expert_loads.max_load[i];
      out.ranks.back().dropped_tokens = graph.expert_loads.dropped[i];
    }
  }
  group_positions(graph, out.ranks);
  out.spans = std::move(executor.spans());
  out.memory = std::move(executor.memory_samples());
  out.rank0_collectives = executor.rank0_collectives();
  return out;
}

}  // namespace

RunStats simulate(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                  const hw::Profile& profile, const SimOptions& options) {
  exec::check_graph(graph, cluster);
  const exec::SharingPlan plan = exec::plan_sharing(graph, cluster, options.share_rank_classes);
  const std::vector<exec::GraphIndex> index = index_classes(graph, plan);
  models::PathTable table(models::link_capacities(cluster));
  const models::TunerOptions tuner = models::tuner_options(options.effects);
  const exec::CommPaths paths(graph, plan, cluster, profile, tuner, table);
  table.finalize();

  kernel::Scheduler scheduler;
  const std::unique_ptr<models::NetworkModel> network =
      models::make_network_model(options.network_model, scheduler, table);
  const std::unique_ptr<models::ComputeModel> compute = models::make_compute_model(
      options.compute_model, profile, options.effects,
      models::KernelChoice{.cuda_graphs = graph.info.cuda_graphs,
                           .attention_fa2 = graph.info.attention_fa2,
                           .fp8_block_scaled = graph.info.fp8_block_scaled});
  exec::ExecSetup setup{.graph = &graph,
                        .plan = &plan,
                        .index = &index,
                        .paths = &paths,
                        .compute = compute.get(),
                        .profile = &profile,
                        .devices_per_node = cluster.devices_per_node(),
                        .record_timeline = options.record_timeline,
                        .recorded = {},
                        .eager_sends = options.eager_sends,
                        .tuner = tuner,
                        .interference = options.effects.on("comm-interference"),
                        .stop_above_memory = options.stop_above_memory};
  TimelinePick pick;
  if (options.record_timeline) {
    pick = pick_timeline(graph, plan, options.timeline_ranks, kDefaultTimelineRanks);
    setup.recorded = pick.recorded;
  }
  exec::Executor executor(scheduler, *network, setup);
  executor.start();
  scheduler.run();
  if (!executor.all_done()) {
    throw base::SimulationError(exec::deadlock_report(graph, plan, executor, scheduler.now()));
  }
  RunStats stats = collect(graph, plan, executor, profile, options);
  stats.events = scheduler.events_processed();
  stats.timeline_ranks = std::move(pick.ranks);
  return stats;
}

MemoryLimit::MemoryLimit(std::int32_t rank, double bytes)
    : base::SimulationError(fmt::format("rank {} holds {:.0f} bytes, over the limit", rank, bytes)),
      rank_(rank),
      bytes_(bytes) {}

}  // namespace tessera::sim
