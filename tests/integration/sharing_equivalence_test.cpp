// SPDX-License-Identifier: Apache-2.0
// Simulating one instance per rank class (graphs synthesized per pipeline stage) gives
// exactly the per-rank statistics and step time of simulating every rank on its own graph.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

class SharingEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(SharingEquivalence, SharedClassesGiveExactlyThePerRankResult) {
  const synth::Scenario& s = GetParam().scenario;
  const Outcome shared = run(s, /*share=*/true);
  const Outcome full = run(s, /*share=*/false);

  const auto ranks = static_cast<std::size_t>(s.cluster.devices);
  EXPECT_EQ(shared.graph.classes.size(), static_cast<std::size_t>(s.parallel.pp));
  EXPECT_EQ(full.graph.classes.size(), ranks);
  EXPECT_EQ(full.stats.simulated_ranks, static_cast<std::int32_t>(ranks));
  // Sharing must actually have been exercised, or the comparison proves nothing.
  EXPECT_EQ(shared.stats.sharing_fallback, "");
  EXPECT_LT(shared.stats.simulated_ranks, static_cast<std::int32_t>(ranks));

  EXPECT_EQ(shared.stats.step_time_s, full.stats.step_time_s);
  EXPECT_GT(full.stats.step_time_s, 0.0);
  ASSERT_EQ(shared.stats.ranks.size(), ranks);
  ASSERT_EQ(full.stats.ranks.size(), ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    expect_same_rank(shared.stats.ranks[r], full.stats.ranks[r], GetParam().name);
  }
  RecordProperty("step_time_s", std::to_string(full.stats.step_time_s));
  RecordProperty("simulated_ranks", std::to_string(shared.stats.simulated_ranks));
  EXPECT_EQ(shared.stats.hbm_capacity, full.stats.hbm_capacity);
  EXPECT_EQ(shared.stats.peak_flops, full.stats.peak_flops);
}

INSTANTIATE_TEST_SUITE_P(Integration, SharingEquivalence, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace tessera::integration
