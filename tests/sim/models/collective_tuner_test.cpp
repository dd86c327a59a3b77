// SPDX-License-Identifier: Apache-2.0
// The tuner's choices against closed forms: per-algorithm volumes, protocol switch points and
// the rings-only fallback.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "hwprofiles/hw_profile.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/tuner.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::models {
namespace {

using graph::CollType;

const CollectiveAlgorithm& algorithm(std::string_view name) {
  return builtin_collectives().at(builtin_collectives().index_of(name));
}

std::string_view name_of(const Choice& c) {
  return builtin_collectives().at(c.algorithm).name();
}

TEST(CollectiveCost, NvlsMeshAndOneShotVolumes) {
  // NVLS: each member sends its buffer once, whatever n.
  EXPECT_EQ(algorithm("nvls").cost(CollType::kAllReduce, 8, 1, 8e6).steps, 1);
  EXPECT_DOUBLE_EQ(algorithm("nvls").cost(CollType::kAllReduce, 8, 1, 8e6).bytes_per_flow, 8e6);
  // Mesh: a 1/n share to each peer, twice for an all-reduce.
  EXPECT_DOUBLE_EQ(algorithm("mesh").cost(CollType::kAllReduce, 8, 1, 8e6).bytes_per_flow, 2e6);
  EXPECT_EQ(algorithm("mesh").cost(CollType::kAllReduce, 8, 1, 8e6).steps, 2);
  EXPECT_DOUBLE_EQ(algorithm("mesh").cost(CollType::kAllGather, 8, 1, 8e6).bytes_per_flow, 1e6);
  // One-shot: the whole buffer to each peer in one step.
  EXPECT_DOUBLE_EQ(algorithm("one_shot").cost(CollType::kAllReduce, 4, 1, 1e6).bytes_per_flow, 1e6);
  EXPECT_EQ(algorithm("one_shot").cost(CollType::kAllReduce, 1, 1, 1e6).steps, 0);
}

TEST(CollectiveCost, LocalStepsCopyOrReduceIntoTheOutput) {
  // The ring's last step per loop: a copy (read + write) of the last bytes / n received, a
  // reduce (two reads + write) for reduce-scatter; whatever the channels.
  const CollectiveAlgorithm& ring = algorithm("ring");
  EXPECT_DOUBLE_EQ(ring.cost(CollType::kAllGather, 4, 2, 8e6).local_traffic, 2 * 2e6);
  EXPECT_DOUBLE_EQ(ring.cost(CollType::kAllReduce, 4, 1, 8e6).local_traffic, 2 * 2e6);
  EXPECT_DOUBLE_EQ(ring.cost(CollType::kReduceScatter, 4, 1, 8e6).local_traffic, 3 * 2e6);
  EXPECT_DOUBLE_EQ(algorithm("rail_ring").cost(CollType::kAllGather, 8, 2, 8e6).local_traffic,
                   2 * 1e6);
  // One-shot reduces all n buffers after the exchange: n reads + one write of the buffer.
  EXPECT_DOUBLE_EQ(algorithm("one_shot").cost(CollType::kAllReduce, 4, 1, 1e6).local_traffic, 5e6);
  // The in-switch and direct algorithms have none.
  EXPECT_DOUBLE_EQ(algorithm("nvls").cost(CollType::kAllReduce, 8, 1, 8e6).local_traffic, 0.0);
  EXPECT_DOUBLE_EQ(algorithm("mesh").cost(CollType::kAllGather, 8, 1, 8e6).local_traffic, 0.0);
}

TEST(CollectiveCost, TreeHalvesTheDataOverTwoTreesPerChannel) {
  // 4 nodes x 2 members: 2 channels, log2(4) = 2 levels, chain of 1 hop: 2 x (1 + 2) steps.
  const CollectiveCost t = algorithm("tree").cost(CollType::kAllReduce, 8, 2, 8e6);
  EXPECT_EQ(t.steps, 6);
  EXPECT_DOUBLE_EQ(t.bytes_per_flow, 2e6);
  hw::Profile p = simtest::test_profile();
  const topology::Cluster c = simtest::make_cluster(p, 8, 2);
  const std::vector<std::int32_t> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_TRUE(algorithm("tree").applies(ranks, c, p));
  std::vector<Flow> flows;
  algorithm("tree").append_flows(ranks, c, flows);
  // Per channel: 8 chain flows (1 hop x 2 ways x 4 nodes) + 2 trees x 3 edges x 2 ways.
  EXPECT_EQ(flows.size(), 2U * (8 + 12));
  EXPECT_FALSE(algorithm("tree").applies({0, 1}, c, p));  // one node
}

// An 8-GPU node, each candidate with one flow per member link at 100 GB/s (0.1 byte/ps)
// except the all-pairs patterns (7 flows per link).
std::vector<Candidate> node_candidates(const std::vector<std::size_t>& algorithms) {
  std::vector<Candidate> out;
  for (std::size_t a : algorithms) {
    const std::string_view n = builtin_collectives().at(a).name();
    const bool all_pairs = n == "one_shot" || n == "mesh";
    out.push_back({a, all_pairs ? 0.1 / 7 : 0.1, 0, 1, {}});
  }
  return out;
}

hw::Profile nccl_like() {
  hw::Profile p = simtest::test_profile();
  p.collective_launch = 8'400'000;  // Simple: 8.4 us + 3.4 us per step ([nccl-tune])
  p.collective_step = 3'400'000;
  p.collective.ll = {true, 6'600'000, 600'000, 0.5};
  p.collective.ll128 = {true, 14'000'000, 1'900'000, 0.92};
  p.collective.channels = 16;
  p.collective.nvls = {true, 25'000'000, 0.6, 16, 5};
  return p;
}

TEST(CollectiveTuner, ProtocolsAndAlgorithmsFollowTheMessageSize) {
  const hw::Profile p = nccl_like();
  const topology::Cluster c = simtest::make_cluster(p, 8);
  const std::vector<std::int32_t> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto cands = node_candidates(tuner_candidates(CollType::kAllReduce, ranks, c, p, {}));
  // 4 KiB: latency-bound. One-shot LL: 6.6 + 0.6 us + 7 x 4 KiB / 0.5 at 100 GB/s = 7.8 us
  // beats ring LL's 6.6 + 14 x 0.6 us (15 us).
  Choice small = tuner_choose(CollType::kAllReduce, 8, 4096, cands, p, {});
  EXPECT_EQ(name_of(small), "one_shot");
  EXPECT_EQ(small.protocol, Protocol::kLL);
  // 1 GiB: bandwidth-bound. NVLS moves 1 GiB per member at 0.6 x 100 GB/s (17.9 ms), the
  // Simple ring 1.75 GiB at 100 GB/s (18.8 ms).
  Choice large = tuner_choose(CollType::kAllReduce, 8, 1 << 30, cands, p, {});
  EXPECT_EQ(name_of(large), "nvls");
  EXPECT_EQ(large.sms, 16);
  // All-gather has no NVLS or one-shot here: ring, Simple at 1 GiB, with the ring's channels.
  const auto ag = node_candidates(tuner_candidates(CollType::kAllGather, ranks, c, p, {}));
  Choice g = tuner_choose(CollType::kAllGather, 8, 1 << 30, ag, p, {});
  EXPECT_EQ(name_of(g), "ring");
  EXPECT_EQ(g.protocol, Protocol::kSimple);
  EXPECT_EQ(g.sms, 16);
}

TEST(CollectiveTuner, OffMeansSimpleRingsAsBefore) {
  const hw::Profile p = nccl_like();
  const topology::Cluster c = simtest::make_cluster(p, 8);
  TunerOptions off;
  off.collective_tuner = false;
  off.ring_local_step = false;
  const std::vector<std::int32_t> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto cands = tuner_candidates(CollType::kAllReduce, ranks, c, p, off);
  ASSERT_EQ(cands.size(), 1U);
  Choice ch = tuner_choose(CollType::kAllReduce, 8, 4096, node_candidates(cands), p, off);
  EXPECT_EQ(name_of(ch), "ring");
  EXPECT_EQ(ch.protocol, Protocol::kSimple);
  // launch + 2(n-1) x step, the pre-tuner formula (no wire latency in this cluster).
  EXPECT_EQ(ch.latency, 8'400'000 + 14 * 3'400'000);
}

TEST(CollectiveTuner, RingLocalStepRunsAtTheHbmStreamingRate) {
  hw::Profile p = nccl_like();
  p.hbm_bandwidth = 2e12;
  p.hbm_efficiency = 0.5;  // 1 TB/s
  const topology::Cluster c = simtest::make_cluster(p, 8);
  const std::vector<std::int32_t> pair = {0, 1};
  const auto cands = node_candidates(tuner_candidates(CollType::kReduceScatter, pair, c, p, {}));
  const double bytes = 1 << 30;
  TunerOptions without;
  without.ring_local_step = false;
  const Choice on = tuner_choose(CollType::kReduceScatter, 2, bytes, cands, p, {});
  const Choice off = tuner_choose(CollType::kReduceScatter, 2, bytes, cands, p, without);
  ASSERT_EQ(on.protocol, off.protocol);
  // Two members: the last step reduces half the buffer, 3 x 0.5 GiB of HBM traffic at 1 TB/s.
  EXPECT_NEAR(static_cast<double>(on.latency - off.latency), 3.0 * bytes / 2 / 1e12 * 1e12, 1.0);
  EXPECT_DOUBLE_EQ(on.bytes_per_flow, off.bytes_per_flow);
}

TEST(CollectiveTuner, NvlsNeedsASwitchThatReducesAndEnoughMembers) {
  hw::Profile p = nccl_like();
  const topology::Cluster c = simtest::make_cluster(p, 8);
  auto has = [&](const std::vector<std::int32_t>& ranks) {
    for (std::size_t a : tuner_candidates(CollType::kAllReduce, ranks, c, p, {})) {
      if (builtin_collectives().at(a).name() == "nvls") {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(has({0, 1, 2, 3, 4}));
  EXPECT_FALSE(has({0, 1, 2, 3}));  // below min_members
  p.collective.nvls.enabled = false;
  EXPECT_FALSE(has({0, 1, 2, 3, 4, 5, 6, 7}));
}

}  // namespace
}  // namespace tessera::models
