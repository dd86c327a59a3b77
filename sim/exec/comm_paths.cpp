// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/comm_paths.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <utility>

#include "base/error.h"
#include "sim/models/collective/flow_routing.h"

namespace tessera::exec {

namespace {

std::size_t num_algorithms() {
  return models::builtin_collectives().size();
}

// The (match key, collective type) pairs and device pairs the instances' nodes use.
void collect_needs(const graph::ExecGraph& graph, const SharingPlan& plan,
                   std::set<std::pair<std::int32_t, graph::CollType>>& coll,
                   std::set<std::pair<std::int32_t, std::int32_t>>& p2p) {
  for (const InstanceSpec& spec : plan.instances) {
    const graph::RankGraph& g = graph.classes[static_cast<std::size_t>(spec.cls)];
    for (const graph::Node& n : g.nodes) {
      if (n.kind == graph::NodeKind::kCollective) {
        coll.emplace(plan.match_of_group[static_cast<std::size_t>(spec.group(n.group))], n.coll);
      } else if (n.kind == graph::NodeKind::kSend) {
        p2p.emplace(spec.rank, spec.peer(n.peer));
      }
    }
  }
}

// Bytes per picosecond one flow gets at the path's bottleneck when only the path runs.
double path_rate(const std::vector<models::LinkUse>& uses, const std::vector<double>& capacity) {
  double rate = 0.0;
  for (const models::LinkUse& u : uses) {
    const double r = capacity[static_cast<std::size_t>(u.link)] / u.mult;
    rate = rate == 0.0 ? r : std::min(rate, r);
  }
  return rate;
}

// The send's own route, each link loaded by as many of the sends it stands for as cross it:
// copies that share its links slow it as they would, copies elsewhere leave it alone.
models::RoutedLoad send_load(const SharingPlan& plan, std::int32_t src, std::int32_t dst,
                             models::FlowRouter& router) {
  router.add(models::Flow{src, dst});
  models::RoutedLoad own = router.take();
  auto copies = plan.send_copies.find({src, dst});
  if (copies == plan.send_copies.end() || own.uses.empty()) {
    return own;
  }
  for (const auto& [s, d] : copies->second) {
    router.add(models::Flow{s, d});
  }
  const models::RoutedLoad all = router.take();
  auto it = all.uses.begin();
  for (models::LinkUse& u : own.uses) {  // both sorted by link
    it = std::lower_bound(it, all.uses.end(), u.link,
                          [](const models::LinkUse& a, std::int32_t l) { return a.link < l; });
    if (it != all.uses.end() && it->link == u.link) {
      u.mult = std::max(u.mult, it->mult);
    }
  }
  return own;
}

// The groups of a match key's class with distinct member sets: groups listed twice are one
// set of devices.
std::vector<std::int32_t> distinct_groups(const graph::ExecGraph& graph,
                                          const std::vector<std::int32_t>& groups) {
  std::vector<std::int32_t> out;
  std::set<std::vector<std::int32_t>> seen;
  for (std::int32_t g : groups) {
    std::vector<std::int32_t> members = graph.groups[static_cast<std::size_t>(g)].ranks;
    std::sort(members.begin(), members.end());
    if (seen.insert(std::move(members)).second) {
      out.push_back(g);
    }
  }
  return out;
}

// Registers what `router` holds as one path.
CollectivePath take_path(models::FlowRouter& router, const std::vector<double>& capacity,
                         int channels, models::PathTable& table) {
  CollectivePath c;
  c.channels = channels;
  models::RoutedLoad load = router.take();
  c.hop_latency = load.max_latency;
  c.rate = path_rate(load.uses, capacity);
  c.path = load.uses.empty() ? models::kNoPath : table.add(std::move(load.uses));
  return c;
}

// A node-deduplicated dispatch group's all-to-alls run DeepEP's kernels (domain_dedup.cpp);
// every other collective, what the tuner may choose.
std::vector<std::size_t> dispatch_algorithms(graph::CollType type, const graph::Group& group,
                                             const topology::Cluster& cluster,
                                             const hw::Profile& profile,
                                             const models::TunerOptions& options) {
  if (group.deduplicates(type)) {
    return {models::builtin_collectives().index_of("deepep")};
  }
  return models::tuner_candidates(type, group.ranks, cluster, profile, options);
}

bool staged(std::size_t algorithm, graph::CollType c, const std::vector<std::int32_t>& ranks,
            const topology::Cluster& cluster) {
  return !models::builtin_collectives().at(algorithm).stages(c, ranks, cluster).empty();
}

}  // namespace

CommPaths::CommPaths(const graph::ExecGraph& graph, const SharingPlan& plan,
                     const topology::Cluster& cluster, const hw::Profile& profile,
                     const models::TunerOptions& options, models::PathTable& table)
    : capacity_(models::link_capacities(cluster)) {
  const std::size_t slots = plan.match_groups.size() * num_algorithms();
  coll_.resize(slots);
  coll_built_.assign(slots, 0);
  std::vector<char> needed(slots, 0);
  std::set<std::pair<std::int32_t, graph::CollType>> types;
  std::set<std::pair<std::int32_t, std::int32_t>> pairs;
  collect_needs(graph, plan, types, pairs);
  for (const auto& [match, type] : types) {
    const auto& group = plan.match_groups[static_cast<std::size_t>(match)].front();
    std::vector<std::size_t> algorithms = dispatch_algorithms(
        type, graph.groups[static_cast<std::size_t>(group)], cluster, profile, options);
    for (std::size_t a : algorithms) {
      if (staged(a, type, graph.groups[static_cast<std::size_t>(group)].ranks, cluster)) {
        build_stages(match, type, a, graph, plan, cluster, table);
      } else {
        needed[static_cast<std::size_t>(match) * num_algorithms() + a] = 1;
      }
    }
    wanted_.emplace(type_key(match, type), std::move(algorithms));
  }
  for (std::size_t s = 0; s < slots; ++s) {
    if (needed[s] != 0) {
      build_collective(s, graph, plan, cluster, table);
    }
  }
  models::FlowRouter router(cluster);
  for (const auto& [src, dst] : pairs) {
    models::RoutedLoad load = send_load(plan, src, dst, router);
    P2PPath p;
    p.latency = load.max_latency;
    p.path = load.uses.empty() ? models::kNoPath : table.add(std::move(load.uses));
    p2p_.emplace(pair_key(src, dst), p);
  }
  build_candidates(graph, plan, cluster);
}

void CommPaths::build_candidates(const graph::ExecGraph& graph, const SharingPlan& plan,
                                 const topology::Cluster& cluster) {
  for (const auto& [key, algorithms] : wanted_) {
    const auto match = static_cast<std::int32_t>(key >> 8U);
    const auto type = static_cast<graph::CollType>(key & 0xffU);
    const auto group = plan.match_groups[static_cast<std::size_t>(match)].front();
    const auto& ranks = graph.groups[static_cast<std::size_t>(group)].ranks;
    std::vector<models::Candidate> list;
    for (std::size_t a : algorithms) {
      const auto stages = models::builtin_collectives().at(a).stages(type, ranks, cluster);
      if (stages.empty()) {
        const CollectivePath& p = collective(match, a);
        list.push_back({a, p.rate, p.hop_latency, p.channels, {}});
        continue;
      }
      const std::vector<CollectivePath>& paths = stage_paths(match, type, a);
      models::Candidate cand{a, paths[0].rate, paths[0].hop_latency, paths[0].channels, {}};
      for (std::size_t i = 0; i < stages.size(); ++i) {
        const models::Stage& st = stages[i];
        cand.stages.push_back({st.algorithm, st.type, static_cast<int>(st.subgroups.front().size()),
                               st.bytes_fraction, paths[i].rate, paths[i].hop_latency,
                               paths[i].channels});
      }
      list.push_back(std::move(cand));
    }
    cands_.emplace(key, std::move(list));
  }
}

void CommPaths::build_stages(std::int32_t match, graph::CollType c, std::size_t algorithm,
                             const graph::ExecGraph& graph, const SharingPlan& plan,
                             const topology::Cluster& cluster, models::PathTable& table) {
  const models::CollectiveRegistry& r = models::builtin_collectives();
  const auto groups = distinct_groups(graph, plan.match_groups[static_cast<std::size_t>(match)]);
  std::vector<std::vector<models::Stage>> per_group;
  for (std::int32_t g : groups) {
    per_group.push_back(
        r.at(algorithm).stages(c, graph.groups[static_cast<std::size_t>(g)].ranks, cluster));
  }
  models::FlowRouter router(cluster);
  std::vector<CollectivePath> paths;
  std::vector<models::Flow> flows;
  for (std::size_t s = 0; s < per_group.front().size(); ++s) {
    const models::CollectiveAlgorithm& sub = r.at(per_group.front()[s].algorithm);
    for (const auto& stages : per_group) {
      if (s >= stages.size()) {
        continue;
      }
      for (const auto& members : stages[s].subgroups) {
        flows.clear();
        sub.append_flows(members, cluster, flows);
        router.add(flows);
      }
    }
    const int channels = sub.channels(per_group.front()[s].subgroups.front(), cluster);
    paths.push_back(take_path(router, capacity_, channels, table));
  }
  stages_.emplace(stage_key(match, c, algorithm), std::move(paths));
}

void CommPaths::build_collective(std::size_t slot, const graph::ExecGraph& graph,
                                 const SharingPlan& plan, const topology::Cluster& cluster,
                                 models::PathTable& table) {
  const models::CollectiveAlgorithm& algorithm =
      models::builtin_collectives().at(slot % num_algorithms());
  const auto& groups = plan.match_groups[slot / num_algorithms()];
  models::FlowRouter router(cluster);
  std::vector<models::Flow> flows;
  for (std::int32_t g : distinct_groups(graph, groups)) {
    flows.clear();
    algorithm.append_flows(graph.groups[static_cast<std::size_t>(g)].ranks, cluster, flows);
    router.add(flows);
  }
  coll_[slot] = take_path(
      router, capacity_,
      algorithm.channels(graph.groups[static_cast<std::size_t>(groups.front())].ranks, cluster),
      table);
  coll_built_[slot] = 1;
}

const CollectivePath& CommPaths::collective(std::int32_t match, std::size_t algorithm) const {
  std::size_t slot = static_cast<std::size_t>(match) * num_algorithms() + algorithm;
  if (slot >= coll_.size() || coll_built_[slot] == 0) {
    throw base::InternalError("CommPaths: collective path was not registered");
  }
  return coll_[slot];
}

const std::vector<models::Candidate>& CommPaths::candidates(std::int32_t match,
                                                            graph::CollType c) const {
  auto it = cands_.find(type_key(match, c));
  if (it == cands_.end()) {
    throw base::InternalError("CommPaths: collective type was not registered for this group");
  }
  return it->second;
}

const std::vector<CollectivePath>& CommPaths::stage_paths(std::int32_t match, graph::CollType c,
                                                          std::size_t algorithm) const {
  auto it = stages_.find(stage_key(match, c, algorithm));
  if (it == stages_.end()) {
    throw base::InternalError("CommPaths: staged collective paths were not registered");
  }
  return it->second;
}

const P2PPath& CommPaths::p2p(std::int32_t src, std::int32_t dst) const {
  auto it = p2p_.find(pair_key(src, dst));
  if (it == p2p_.end()) {
    throw base::InternalError("CommPaths: send path was not registered");
  }
  return it->second;
}

}  // namespace tessera::exec
