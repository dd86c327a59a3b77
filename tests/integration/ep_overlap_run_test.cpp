// SPDX-License-Identifier: Apache-2.0
// Overlapped expert-parallel all-to-alls, simulated (docs/moe.md, "Overlap"): combined 1F1B
// hides part of the all-to-alls that cross nodes behind the other microbatch's compute, and
// saves at most what was exposed.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

constexpr auto kEp = static_cast<std::size_t>(graph::GroupKind::kEP);

// Sixteen H100s on two nodes, EP 16 (every all-to-all crosses the nodes), no pipelining:
// eight microbatches of combined 1F1B, or plain 1F1B.
synth::Scenario ep16(bool overlap) {
  synth::Scenario s = tiny_like(1, 1, 16);
  s.model.layers = 4;
  s.model.hidden = 1024;
  s.model.heads = 8;
  s.model.moe = {.experts = 16, .top_k = 4, .expert_ffn = 1024};
  s.training.seq_len = 1024;
  s.training.global_batch = 16 * 2 * 8;
  s.parallel.ep = 16;
  s.parallel.ep_comm_overlap = overlap;
  s.cluster.topology = topology::load_topology_preset("dgx-h100-superpod", {});
  return s;
}

double max_exposed_ep(const sim::RunStats& st) {
  double out = 0.0;
  for (const auto& r : st.ranks) {
    out = std::max(out, r.exposed_comm_s[kEp]);
  }
  return out;
}

TEST(EpOverlapRun, CombinedOneFOneBHidesAllToAllsBehindTheOtherMicrobatch) {
  const Outcome off = run(ep16(false), true);
  const Outcome on = run(ep16(true), true);
  const double exposed_off = max_exposed_ep(off.stats);
  const double exposed_on = max_exposed_ep(on.stats);
  ASSERT_GT(exposed_off, 0.05 * off.stats.step_time_s);  // there is something to hide
  EXPECT_LT(exposed_on, 0.6 * exposed_off);
  EXPECT_LT(on.stats.step_time_s, off.stats.step_time_s);
  EXPECT_LE(off.stats.step_time_s - on.stats.step_time_s, exposed_off * 1.001);
  // The same all-to-alls move either way.
  EXPECT_NEAR(on.stats.ranks[0].comm_s[kEp], off.stats.ranks[0].comm_s[kEp],
              0.02 * off.stats.ranks[0].comm_s[kEp]);
}

}  // namespace
}  // namespace tessera::integration
