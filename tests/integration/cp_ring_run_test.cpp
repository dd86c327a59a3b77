// SPDX-License-Identifier: Apache-2.0
// Ring attention simulated (docs/context_parallel.md §4): on one H100 node with CP8 and 32K
// tokens, the K/V exchanges run on the CP stream beside the attention blocks and hide behind
// them, where the all-gather variant, which moves the same bytes, waits for its collectives.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

constexpr auto kCp = static_cast<std::size_t>(graph::GroupKind::kCP);

synth::Scenario cp8(synth::CpComm comm) {
  synth::Scenario s = tiny_like(1, 1, 1);
  s.model.layers = 2;
  s.model.hidden = 2048;
  s.model.heads = 16;
  s.training.seq_len = 32768;
  s.training.micro_batch = 1;
  s.training.global_batch = 2;
  s.parallel.cp = 8;
  s.parallel.cp_comm = comm;
  s.cluster.devices = 8;
  return s;
}

struct CpTimes {
  double exposed = 0.0;
  double in_flight = 0.0;
  double step = 0.0;
};

CpTimes cp_times(synth::CpComm comm) {
  const Outcome o = run(cp8(comm), true);
  CpTimes t;
  for (const auto& r : o.stats.ranks) {
    t.exposed = std::max(t.exposed, r.exposed_comm_s[kCp]);
    t.in_flight = std::max(t.in_flight, r.comm_s[kCp]);
  }
  t.step = o.stats.step_time_s;
  return t;
}

TEST(CpRingRun, TheRingHidesWhatTheAllGatherExposes) {
  const CpTimes gather = cp_times(synth::CpComm::kAllGather);
  const CpTimes ring = cp_times(synth::CpComm::kP2P);
  ASSERT_GT(gather.exposed, 0.0);
  ASSERT_GT(ring.in_flight, 0.0);
  EXPECT_LT(ring.exposed, 0.5 * gather.exposed);
  EXPECT_LT(ring.exposed, 0.5 * ring.in_flight);
}

}  // namespace
}  // namespace tessera::integration
