// SPDX-License-Identifier: Apache-2.0
// FSDP1's backward prefetch, simulated (docs/sharded_data_parallel.md §2): under
// BACKWARD_POST each backward gather waits for the previous unit's gradients, so it runs
// beside that unit's reduce-scatter and under no compute. The same bytes move; the step is
// longer by what those gathers now expose.
#include <gtest/gtest.h>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

constexpr auto kDp = static_cast<std::size_t>(graph::GroupKind::kDP);

// ZeRO-3 over the 8 H100s of one node: 8 layers of hidden 2048, two microbatches of 1024
// tokens, so that each unit's gather is a sizeable part of its compute.
synth::Scenario fsdp8(synth::BackwardPrefetch prefetch) {
  synth::Scenario s = tiny_like(1, 1, 8);
  s.model.layers = 8;
  s.model.hidden = 2048;
  s.model.heads = 16;
  s.training.seq_len = 1024;
  s.training.micro_batch = 1;
  s.training.global_batch = 16;
  s.parallel.zero = 3;
  s.training.backward_prefetch = prefetch;
  return s;
}

TEST(FsdpPrefetchRun, BackwardPostExposesTheBackwardGathers) {
  const Outcome pre = run(fsdp8(synth::BackwardPrefetch::kPre), true);
  const Outcome post = run(fsdp8(synth::BackwardPrefetch::kPost), true);
  const sim::RankStats& a = pre.stats.ranks[0];
  const sim::RankStats& b = post.stats.ranks[0];
  EXPECT_DOUBLE_EQ(a.sent_bytes[kDp], b.sent_bytes[kDp]);
  EXPECT_GT(b.exposed_comm_s[kDp], a.exposed_comm_s[kDp] + 0.1 * a.comm_s[kDp]);
  EXPECT_GT(post.stats.step_time_s, pre.stats.step_time_s);
  // What the step gains is what the gathers expose, beyond what they exposed before.
  EXPECT_LE(post.stats.step_time_s - pre.stats.step_time_s,
            (b.exposed_comm_s[kDp] - a.exposed_comm_s[kDp]) * 1.001);
}

}  // namespace
}  // namespace tessera::integration
