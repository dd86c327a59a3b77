// SPDX-License-Identifier: Apache-2.0
// The communication groups of a step (synthesize.cpp sets them up before any rank is built):
// every mesh axis's groups, data with context parallelism, DualPipe's mirror pairs, and the
// embedding group that holds the input embedding's table and its copies.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "synth/build/dispatch_share.h"
#include "synth/build/stage_builder.h"
#include "synth/models/transformer.h"
#include "topology/cluster.h"

namespace tessera::synth::detail {

namespace {

// The devices of the job in one scale-up domain (a node; a GB200 NVL72 rack's share of the
// job), as topology::Cluster lays them out; 0 without a profile.
int domain_devices(const Scenario& s) {
  if (!s.cluster.profile) {
    return 0;
  }
  const int node = topology::node_devices(s.cluster.topology, *s.cluster.profile);
  const int used = topology::job_devices_per_node(s.cluster.topology, node, s.cluster.devices);
  return used > 0 ? used : node;
}

// Every rank's group along each mesh axis (the expert axes' with MoE layers only).
void make_axis_groups(graph::ExecGraph& g, Context& c) {
  const auto& mesh = c.mesh;
  const int domain = domain_devices(c.s);
  std::array<std::int32_t, stg::kNumAxes> none{};
  none.fill(-1);
  c.group_of.assign(static_cast<std::size_t>(c.ranks), none);
  // Pipeline groups carry no collective but name each rank's send/recv peers. The expert
  // axes' groups exist with MoE layers: expert-tensor collectives count as TP, the experts'
  // gradient reduction as DP.
  constexpr std::array<std::pair<Axis, graph::GroupKind>, 7> kAxes = {
      std::pair{Axis::kTP, graph::GroupKind::kTP},  std::pair{Axis::kDP, graph::GroupKind::kDP},
      std::pair{Axis::kPP, graph::GroupKind::kPP},  std::pair{Axis::kCP, graph::GroupKind::kCP},
      std::pair{Axis::kETP, graph::GroupKind::kTP}, std::pair{Axis::kEP, graph::GroupKind::kEP},
      std::pair{Axis::kEDP, graph::GroupKind::kDP}};
  for (auto [axis, kind] : kAxes) {
    if (mesh.axis_size(axis) == 1 || (axis >= Axis::kETP && !c.s.model.moe.on())) {
      continue;
    }
    for (std::int64_t r = 0; r < mesh.size(); ++r) {
      auto& slot = c.group_of[static_cast<std::size_t>(r)][static_cast<std::size_t>(axis)];
      if (slot >= 0) {
        continue;
      }
      graph::Group grp{kind, mesh.group(r, axis)};
      if (axis == Axis::kEP && c.s.model.moe.dispatcher == MoeDispatcher::kDeepEP && domain > 0) {
        grp.domain_share = dispatch_share(c.s.model.moe, grp.ranks, domain);
      }
      auto id = static_cast<std::int32_t>(g.groups.size());
      for (std::int32_t member : grp.ranks) {
        c.group_of[static_cast<std::size_t>(member)][static_cast<std::size_t>(axis)] = id;
      }
      g.groups.push_back(std::move(grp));
    }
  }
}

// Registers `members` (sorted) as a data-parallel group for each of them in `slot_of`.
void add_dp_group(graph::ExecGraph& g, std::vector<std::int32_t> members,
                  std::vector<std::int32_t>& slot_of) {
  std::sort(members.begin(), members.end());
  auto id = static_cast<std::int32_t>(g.groups.size());
  for (std::int32_t m : members) {
    slot_of[static_cast<std::size_t>(m)] = id;
  }
  g.groups.push_back({graph::GroupKind::kDP, std::move(members)});
}

// The ranks `rank`'s data-parallel coordinate d reaches at DP coordinates `dps`, from each
// of the ranks in `from` (which share d).
std::vector<std::int32_t> along_dp(const parallel::Mesh& mesh,
                                   const std::vector<std::int32_t>& from,
                                   const std::vector<std::int64_t>& dps, std::int64_t d) {
  std::vector<std::int32_t> out;
  for (std::int32_t r : from) {
    for (std::int64_t to : dps) {
      out.push_back(static_cast<std::int32_t>(mesh.neighbour(r, Axis::kDP, to - d)));
    }
  }
  return out;
}

// The dense parameters' gradients are summed over data and context parallelism together
// (Megatron's data-parallel group with CP): DP's own group when cp = 1. Under HSDP
// (dp_shard < dp) that group is cut into shard groups of dp_shard consecutive DP ranks (x cp),
// and the ranks at the same place of each shard group form a replica group.
void make_dense_groups(graph::ExecGraph& g, Context& c) {
  const parallel::Mesh& mesh = c.mesh;
  const std::int64_t dp = mesh.axis_size(Axis::kDP);
  const std::int64_t shard = c.s.parallel.shard_dp();
  c.dp_cp_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  c.replica_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  for (std::int64_t r = 0; r < mesh.size(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (mesh.axis_size(Axis::kCP) == 1 && shard == dp) {
      c.dp_cp_group_of[i] = c.group_of[i][static_cast<std::size_t>(Axis::kDP)];
      continue;
    }
    const std::int64_t d = mesh.coord(r)[Axis::kDP];
    if (c.dp_cp_group_of[i] < 0) {
      std::vector<std::int64_t> dps;
      for (std::int64_t j = d - d % shard; j < d - d % shard + shard; ++j) {
        dps.push_back(j);
      }
      add_dp_group(g, along_dp(mesh, mesh.group(r, Axis::kCP), dps, d), c.dp_cp_group_of);
    }
    if (shard < dp && c.replica_group_of[i] < 0) {
      std::vector<std::int64_t> dps;
      for (std::int64_t j = d % shard; j < dp; j += shard) {
        dps.push_back(j);
      }
      add_dp_group(g, along_dp(mesh, {static_cast<std::int32_t>(r)}, dps, d), c.replica_group_of);
    }
  }
}

}  // namespace

void make_groups(graph::ExecGraph& g, Context& c) {
  const auto& mesh = c.mesh;
  make_axis_groups(g, c);
  make_dense_groups(g, c);
  c.mirror_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  const std::int64_t pp = mesh.axis_size(Axis::kPP);
  if (schedule::placement_shape(c.s.schedule.kind) == schedule::PlacementShape::kDual && pp > 1) {
    for (std::int64_t r = 0; r < mesh.size(); ++r) {
      std::int64_t st = mesh.coord(r)[Axis::kPP];
      if (st >= pp / 2) {
        continue;
      }
      auto mirror = mesh.neighbour(r, Axis::kPP, pp - 1 - 2 * st);
      auto id = static_cast<std::int32_t>(g.groups.size());
      g.groups.push_back({graph::GroupKind::kPP,
                          {static_cast<std::int32_t>(r), static_cast<std::int32_t>(mirror)}});
      c.mirror_group_of[static_cast<std::size_t>(r)] = id;
      c.mirror_group_of[static_cast<std::size_t>(mirror)] = id;
    }
  }
  c.embed_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  // A tied output layer, or multi-token prediction's embedding, on another rank than the
  // input embedding: a copy there, whose gradient joins the embedding's.
  const std::vector<std::int64_t> holders = models::embedding_table_ranks(c.s);
  if (holders.size() < 2) {
    return;
  }
  for (std::int64_t r = 0; r < mesh.size(); ++r) {
    const std::int64_t st = mesh.coord(r)[Axis::kPP];
    if (st != holders.front()) {
      continue;
    }
    graph::Group grp{graph::GroupKind::kPP, {}};
    for (std::int64_t h : holders) {
      grp.ranks.push_back(static_cast<std::int32_t>(mesh.neighbour(r, Axis::kPP, h - st)));
    }
    auto id = static_cast<std::int32_t>(g.groups.size());
    for (std::int32_t member : grp.ranks) {
      c.embed_group_of[static_cast<std::size_t>(member)] = id;
    }
    g.groups.push_back(std::move(grp));
  }
}

}  // namespace tessera::synth::detail
