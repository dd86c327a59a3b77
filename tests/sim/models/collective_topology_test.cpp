// SPDX-License-Identifier: Apache-2.0
// Collectives on real topologies: rail-aligned data-parallel rings stay off the spine of a
// rail-optimized fabric, and a TP8 collective inside an Ascend 910B HCCS server uses every
// mesh link (and the step of a Llama-3-8B-like TP8 run gets faster for it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "hwprofiles/hw_profile.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/flow_routing.h"
#include "sim/models/collective/tuner.h"
#include "sim/simulation.h"
#include "synth/build/synthesize.h"
#include "synth/scenario/scenario.h"
#include "tests/sim/sim_test_util.h"
#include "tests/temp_dir.h"
#include "topology/cluster.h"

namespace tessera::models {
namespace {

using graph::CollType;
using topology::LinkClass;

const CollectiveAlgorithm& algorithm(std::string_view name) {
  return builtin_collectives().at(builtin_collectives().index_of(name));
}

// 4 DGX H100 nodes on a rail-optimized fat tree with a 4:1 oversubscribed spine.
topology::Cluster superpod(const hw::Profile& p) {
  topology::TopologySpec spec = topology::load_topology_preset("dgx-h100-superpod", {});
  spec.oversubscription = 4;
  return {spec, p, 32};
}

// The data-parallel group of TP index t under TP4 x DP8 (rank = dp * 4 + tp).
std::vector<std::int32_t> dp_group(int t) {
  std::vector<std::int32_t> ranks;
  for (int d = 0; d < 8; ++d) {
    ranks.push_back(d * 4 + t);
  }
  return ranks;
}

int fabric_links(const topology::Cluster& c, const std::vector<Flow>& flows) {
  FlowRouter router(c);
  router.add(flows);
  int n = 0;
  for (const LinkUse& u : router.take().uses) {
    n += c.link(u.link).cls == LinkClass::kFabric ? 1 : 0;
  }
  return n;
}

TEST(RailAlignment, Tp4DataParallelRingsNeverReachTheSpine) {
  const hw::Profile p = hw::load_profile("h100-sxm");
  const topology::Cluster c = superpod(p);
  for (int t = 0; t < 4; ++t) {
    const std::vector<std::int32_t> ranks = dp_group(t);
    for (CollType type : {CollType::kAllReduce, CollType::kReduceScatter, CollType::kAllGather}) {
      std::set<std::string_view> names;
      for (std::size_t a : tuner_candidates(type, ranks, c, p, TunerOptions{})) {
        const CollectiveAlgorithm& alg = builtin_collectives().at(a);
        names.insert(alg.name());
        std::vector<Flow> flows;  // whatever the tuner may choose stays on its rails
        alg.append_flows(ranks, c, flows);
        EXPECT_EQ(fabric_links(c, flows), 0) << alg.name() << ", TP index " << t;
        for (const Flow& f : flows) {
          for (topology::LinkId l : c.route(f.src, f.dst)) {
            EXPECT_NE(c.vertex_kind(c.link(l).to), topology::VertexKind::kSpine);
          }
        }
      }
      EXPECT_EQ(names.count("rail_ring"), 1U);
      EXPECT_EQ(names.count("ring"), 0U);
    }
    std::vector<Flow> plain;  // the same rings hopping across rails: through the spine
    algorithm("ring").append_flows(ranks, c, plain);
    EXPECT_GT(fabric_links(c, plain), 0);
  }
}

TEST(RailAlignment, OffTheTunerKeepsCrossRailRings) {
  const hw::Profile p = hw::load_profile("h100-sxm");
  const topology::Cluster c = superpod(p);
  TunerOptions off;
  off.rail_alignment = false;
  const auto cands = tuner_candidates(CollType::kAllGather, dp_group(1), c, p, off);
  ASSERT_EQ(cands.size(), 1U);
  EXPECT_EQ(builtin_collectives().at(cands.front()).name(), "ring");
}

// An all-to-all over two nodes (an expert-parallel group of 16): with PXN every transfer to
// the other node leaves through the NIC on the destination's rail.
TEST(RailAlignment, AllToAllAcrossNodesNeverReachesTheSpine) {
  const hw::Profile p = hw::load_profile("h100-sxm");
  const topology::Cluster c = superpod(p);
  std::vector<std::int32_t> ranks;
  for (std::int32_t r = 8; r < 24; ++r) {
    ranks.push_back(r);
  }
  const auto cands = tuner_candidates(CollType::kAllToAll, ranks, c, p, TunerOptions{});
  ASSERT_EQ(cands.size(), 1U);
  EXPECT_EQ(builtin_collectives().at(cands.front()).name(), "rail_pairwise");
  std::vector<Flow> flows;
  algorithm("rail_pairwise").append_flows(ranks, c, flows);
  EXPECT_EQ(fabric_links(c, flows), 0);
  // Per member: 7 peers in its node and 1 on its rail direct, 7 through a node-mate.
  EXPECT_EQ(flows.size(), 16U * (7U + 1U + 2U * 7U));
  std::vector<Flow> plain;
  algorithm("pairwise").append_flows(ranks, c, plain);
  EXPECT_GT(fabric_links(c, plain), 0);
  TunerOptions off;
  off.rail_alignment = false;
  EXPECT_EQ(
      builtin_collectives().at(tuner_candidates(CollType::kAllToAll, ranks, c, p, off)[0]).name(),
      "pairwise");
  const std::vector<std::int32_t> one_node = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_FALSE(algorithm("rail_pairwise").applies(one_node, c, p));
}

// One all-to-all of `bytes` per member over ranks 8-23 of the superpod, simulated.
double all_to_all_time(const hw::Profile& p, const topology::Cluster& c, double bytes,
                       bool rail_alignment) {
  graph::ExecGraph g;
  g.groups.push_back({});
  for (std::int32_t r = 8; r < 24; ++r) {
    g.groups.back().ranks.push_back(r);
  }
  std::vector<graph::RankGraph> graphs(32);
  for (std::int32_t r : g.groups.back().ranks) {
    graphs[static_cast<std::size_t>(r)].add(
        simtest::collective(g, "a2a", 0, CollType::kAllToAll, bytes));
  }
  simtest::set_per_rank(g, graphs);
  sim::SimOptions o;
  if (!rail_alignment) {
    o.effects.disable("rail-alignment");
  }
  return sim::simulate(g, c, p, o).step_time_s;
}

// Realigned, each NIC carries the S/16 of all 8 node-mates to its rail-mate: S/2 at the NIC
// rate, after one step's latency. Straight across rails, 7 of every 8 transfers climb the
// spine: with the leaves full (4 nodes each) and 4:1 oversubscribed, each leaf's uplinks
// carry 14 of them on one NIC's worth of bandwidth.
TEST(RailAlignment, AllToAllAcrossNodesRunsAtTheNicRate) {
  const hw::Profile p = hw::load_profile("h100-sxm");
  topology::TopologySpec spec = topology::load_topology_preset("dgx-h100-superpod", {});
  spec.oversubscription = 4;
  spec.nodes_per_leaf = 4;
  const topology::Cluster c(spec, p, 32);
  double nic = 1e300;
  base::SimTime hop = 0;
  for (topology::LinkId l : c.route(8, 16)) {  // same rail, next node
    nic = std::min(nic, c.link(l).bandwidth * c.link(l).efficiency);
    hop += c.link(l).latency;
  }
  const double bytes = 1024.0 * (1 << 20);
  const double latency = base::to_seconds(p.collective_launch + p.collective_step + hop);
  const double aligned = all_to_all_time(p, c, bytes, true);
  EXPECT_NEAR(aligned, bytes / 2 / nic + latency, 1e-6 * aligned);
  const double across = all_to_all_time(p, c, bytes, false);
  std::printf("1 GiB all-to-all over 2 nodes: %.2f ms rail-aligned, %.2f ms across rails\n",
              aligned * 1e3, across * 1e3);
  EXPECT_GT(across, 1.7 * aligned);
}

topology::Cluster hccs_server(const hw::Profile& p) {
  return {topology::load_topology_preset("ascend-910b-cluster", {}), p, 8};
}

TEST(HccsMesh, Tp8CollectiveLoadsAllFiftySixLinks) {
  const hw::Profile p = hw::load_profile("ascend-910b");
  const topology::Cluster c = hccs_server(p);
  const std::vector<std::int32_t> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto cands = tuner_candidates(CollType::kAllReduce, ranks, c, p, TunerOptions{});
  std::vector<Candidate> list;
  for (std::size_t a : cands) {
    std::vector<Flow> flows;
    builtin_collectives().at(a).append_flows(ranks, c, flows);
    FlowRouter router(c);
    router.add(flows);
    RoutedLoad load = router.take();
    double rate = 0.0;
    for (const LinkUse& u : load.uses) {
      const topology::Link& l = c.link(u.link);
      const double r = l.bandwidth * l.efficiency / 1e12 / u.mult;
      rate = rate == 0.0 ? r : std::min(rate, r);
    }
    list.push_back({a, rate, load.max_latency, builtin_collectives().at(a).channels(ranks, c), {}});
  }
  const Choice ch = tuner_choose(CollType::kAllReduce, 8, 64e6, list, p, TunerOptions{});
  EXPECT_EQ(builtin_collectives().at(ch.algorithm).name(), "mesh");
  std::vector<Flow> flows;
  builtin_collectives().at(ch.algorithm).append_flows(ranks, c, flows);
  FlowRouter router(c);
  router.add(flows);
  std::set<topology::LinkId> loaded;
  for (const LinkUse& u : router.take().uses) {
    if (c.link(u.link).cls == LinkClass::kScaleUp) {
      loaded.insert(u.link);
    }
  }
  int mesh_links = 0;
  for (std::size_t l = 0; l < c.num_links(); ++l) {
    mesh_links += c.link(static_cast<topology::LinkId>(l)).cls == LinkClass::kScaleUp ? 1 : 0;
  }
  EXPECT_EQ(mesh_links, 56);
  EXPECT_EQ(loaded.size(), 56U);
}

constexpr const char* kLlama8bTp8 = R"(name: llama3-8b-910b-tp8
model: llama3-8b
training:
  seq_len: 4096
  global_batch: 8
  micro_batch: 1
  precision: bf16
  recompute: none
  attention: flash
parallelism:
  tp: 8
  pp: 1
  dp: 1
  sp: false
schedule: 1f1b
cluster:
  hardware: ascend-910b
  topology: ascend-910b-cluster
  devices: 8
)";

sim::RunStats run_llama(bool tuner) {
  testing::TempDir dir;
  const synth::Scenario s = synth::load_scenario(dir.write("s.yaml", kLlama8bTp8));
  const graph::ExecGraph g = synth::synthesize(s);
  const hw::Profile p = hw::load_profile(s.cluster.hardware);
  const topology::Cluster c(s.cluster.topology, p, static_cast<int>(s.cluster.devices));
  sim::SimOptions o;
  if (!tuner) {
    o.effects.disable("collective-tuner");
  }
  return sim::simulate(g, c, p, o);
}

TEST(HccsMesh, Llama8bTp8StepGetsFasterWithTheMesh) {
  const sim::RunStats ring = run_llama(false);
  const sim::RunStats mesh = run_llama(true);
  const auto tp = static_cast<std::size_t>(graph::GroupKind::kTP);
  std::printf(
      "Llama-3-8B-like TP8 on 8 Ascend 910B (HCCS mesh):\n"
      "  rings only (tuner off): step %.1f ms, exposed TP comm %.1f ms\n"
      "  tuner (mesh):           step %.1f ms, exposed TP comm %.1f ms\n",
      1e3 * ring.step_time_s, 1e3 * ring.ranks[0].exposed_comm_s[tp], 1e3 * mesh.step_time_s,
      1e3 * mesh.ranks[0].exposed_comm_s[tp]);
  EXPECT_LT(mesh.step_time_s, 0.8 * ring.step_time_s);
  EXPECT_LT(mesh.ranks[0].exposed_comm_s[tp], 0.3 * ring.ranks[0].exposed_comm_s[tp]);
}

}  // namespace
}  // namespace tessera::models
