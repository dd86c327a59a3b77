// SPDX-License-Identifier: Apache-2.0
// Skewed MoE routing (docs/moe.md): the loads it draws conserve the routed rows, a seed gives
// the same loads every time, the capacity factor's drops are counted, a uniform "skew" is
// exactly balanced routing, and the slowest rank's time grows with the skew.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "synth/build/synthesize.h"
#include "synth/parallel/mesh.h"
#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

// Two stages of four ranks; EP 4 over each stage's TP x DP ranks; 8 experts, top-2.
synth::Scenario skewed(double s, std::uint64_t seed) {
  synth::Scenario sc = tiny_like(2, 2, 2);
  sc.model.layers = 4;
  sc.parallel.sp = true;
  sc.model.moe = {.experts = 8, .top_k = 2, .expert_ffn = 256};
  sc.model.moe.routing.kind = synth::RoutingKind::kZipf;
  sc.model.moe.routing.s = s;
  sc.model.moe.routing.seed = seed;
  sc.parallel.ep = 4;
  synth::check_or_throw(sc);
  return sc;
}

TEST(MoeSkew, LoadsConserveTheRoutedRowsAndRepeatWithTheSeed) {
  const synth::Scenario s = skewed(1.2, 7);
  const graph::ExecGraph g = synth::synthesize(s);
  const graph::ExpertLoads& l = g.expert_loads;
  ASSERT_FALSE(l.empty());
  // Dropless: an EP group receives what it sends, so its ranks' expert factors average 1.
  const synth::Scenario same = skewed(1.2, 7);
  const graph::ExpertLoads again = synth::synthesize(same).expert_loads;
  EXPECT_EQ(again.expert, l.expert);
  EXPECT_EQ(again.exchange, l.exchange);
  EXPECT_NE(synth::synthesize(skewed(1.2, 8)).expert_loads.expert, l.expert);
  const synth::parallel::Mesh mesh(s.parallel);
  for (std::int32_t layer = 0; layer < l.layers; ++layer) {
    for (std::int32_t mb = 0; mb < l.microbatches; ++mb) {
      double sum = 0.0;
      for (std::int32_t r : mesh.group(0, synth::Axis::kEP)) {
        sum += l.factor(graph::LoadScale::kExpert, r, layer, mb);
      }
      EXPECT_NEAR(sum / 4.0, 1.0, 1e-5) << "layer " << layer << " mb " << mb;
    }
  }
  for (double d : l.dropped) {
    EXPECT_EQ(d, 0.0);
  }
}

// With a capacity factor of 1, an expert takes at most ceil(T_r·k/E) rows from each source:
// under skew the hot experts' excess is dropped and every rank's load is at most 1.
TEST(MoeSkew, CapacityDropsTheHotExpertsExcess) {
  synth::Scenario s = skewed(1.2, 7);
  s.model.moe.capacity_factor = 1.0;
  const graph::ExpertLoads l = synth::synthesize(s).expert_loads;
  for (std::size_t r = 0; r < l.dropped.size(); ++r) {
    EXPECT_GT(l.dropped[r], 0.0) << "rank " << r;
    EXPECT_LE(l.max_load[r], 1.0 + 1e-6) << "rank " << r;
  }
}

// Zipf exponent 0 is uniform: every rank at its balanced load, exactly the balanced step;
// the step then grows with the skew, and the report's per-rank loads follow.
TEST(MoeSkew, TheSlowestRankDecidesAndGrowsWithTheSkew) {
  synth::Scenario balanced = skewed(0.0, 1);
  balanced.model.moe.routing.kind = synth::RoutingKind::kBalanced;
  const Outcome flat = run(balanced, true);
  const Outcome uniform = run(skewed(0.0, 1), true);
  EXPECT_EQ(uniform.stats.simulated_ranks, flat.stats.simulated_ranks);
  EXPECT_DOUBLE_EQ(uniform.stats.step_time_s, flat.stats.step_time_s);
  double last = flat.stats.step_time_s;
  for (double e : {0.6, 1.2, 2.0}) {
    const Outcome o = run(skewed(e, 1), true);
    EXPECT_GT(o.stats.step_time_s, last) << "s " << e;
    last = o.stats.step_time_s;
    double max = 0.0;
    for (const sim::RankStats& k : o.stats.ranks) {
      max = std::max(max, k.expert_load_max);
    }
    EXPECT_GT(max, 1.0) << "s " << e;
  }
}

}  // namespace
}  // namespace tessera::integration

namespace tessera::integration {
namespace {

// Ranks that share a load share an instance; the result is exactly that of simulating every
// rank on its own graph.
TEST(MoeSkew, SharingRanksOfEqualLoadsGivesThePerRankResult) {
  synth::Scenario s = skewed(1.2, 3);  // one stage of 8 ranks: two EP groups of 4
  s.parallel.pp = 1;
  s.parallel.dp = 4;
  s.training.global_batch = 16;
  synth::check_or_throw(s);
  const Outcome shared = run(s, true);
  const Outcome full = run(s, false);
  EXPECT_LT(shared.stats.simulated_ranks, full.stats.simulated_ranks);
  EXPECT_EQ(shared.stats.step_time_s, full.stats.step_time_s);
  ASSERT_EQ(shared.stats.ranks.size(), full.stats.ranks.size());
  for (std::size_t r = 0; r < full.stats.ranks.size(); ++r) {
    expect_same_rank(shared.stats.ranks[r], full.stats.ranks[r], "skewed");
    EXPECT_EQ(shared.stats.ranks[r].expert_load, full.stats.ranks[r].expert_load);
  }
}

}  // namespace
}  // namespace tessera::integration

namespace tessera::integration {
namespace {

// §1.3 at the network: with balanced routing each rank sends (ep-1)/ep of its T_r·k rows in
// each of the four all-to-alls of an MoE layer and microbatch (dispatch and combine, forward
// and backward): per step 4·L_stage·m·(ep-1)/ep·T_r·k·h·B bytes over EP.
TEST(MoeSkew, AllToAllBytesLeavingARankMatchTheClosedForm) {
  synth::Scenario s = skewed(0.0, 1);
  s.model.moe.routing.kind = synth::RoutingKind::kBalanced;
  const Outcome o = run(s, true);
  const double rows = 2.0 * 128.0 / 2.0 * 2.0;  // T_r·k: micro_batch·s/tp tokens, top-2
  const double layers = 2.0;                    // per stage
  const double m = static_cast<double>(s.microbatches());
  const double expect = 4.0 * layers * m * 0.75 * rows * 256.0 * 2.0;
  for (const sim::RankStats& k : o.stats.ranks) {
    EXPECT_DOUBLE_EQ(k.sent_bytes[static_cast<std::size_t>(graph::GroupKind::kEP)], expect)
        << "rank " << k.rank;
  }
}

}  // namespace
}  // namespace tessera::integration

namespace tessera::integration {
namespace {

// A loads file's line per MoE layer: with weights 5,1,1,1,1,1,1,1 over 8 experts on EP 4
// (two experts a rank), the first EP rank gets (5+1)/12 of the rows where balanced gives it
// 1/4: its expert factor is 2, the others' 2/3; the lines repeat over the layers.
TEST(MoeSkew, ALoadsFileSetsEachRanksShare) {
  synth::Scenario s = skewed(0.0, 1);
  s.model.moe.routing.kind = synth::RoutingKind::kFile;
  s.model.moe.routing.weights = {{5, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}};
  const graph::ExpertLoads l = synth::synthesize(s).expert_loads;
  const synth::parallel::Mesh mesh(s.parallel);
  const std::vector<std::int32_t> first = mesh.group(0, synth::Axis::kEP);   // layers 0, 1
  const std::vector<std::int32_t> second = mesh.group(4, synth::Axis::kEP);  // layers 2, 3
  for (std::int32_t mb = 0; mb < l.microbatches; ++mb) {
    EXPECT_NEAR(l.factor(graph::LoadScale::kExpert, first[0], 0, mb), 2.0, 1e-6);
    EXPECT_NEAR(l.factor(graph::LoadScale::kExpert, first[1], 0, mb), 2.0 / 3.0, 1e-6);
    EXPECT_NEAR(l.factor(graph::LoadScale::kExpert, first[0], 1, mb), 1.0, 1e-6);
    EXPECT_NEAR(l.factor(graph::LoadScale::kExpert, second[0], 2, mb), 2.0, 1e-6);
  }
}

}  // namespace
}  // namespace tessera::integration
