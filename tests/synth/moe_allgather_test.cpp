// SPDX-License-Identifier: Apache-2.0
// The all-gather token dispatcher (docs/moe.md) against formulas_moe_cp_zero.md §1.3: the EP
// group's tokens, probabilities and routing map all-gathered, the combine a reduce-scatter,
// the backward the same again; the experts' GEMMs those of the all-to-all dispatcher.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "synth/models/transformer.h"
#include "tests/synth/moe_fixtures.h"

namespace tessera::synth {
namespace {

using graph::CollType;
using graph::Phase;
using stg::OpKind;
using testing::moe_scenario;

Scenario allgather(std::int64_t tp, std::int64_t dp, std::int64_t ep) {
  Scenario s = moe_scenario(tp, dp, ep);
  s.model.moe.dispatcher = MoeDispatcher::kAllGather;
  check_or_throw(s);
  return s;
}

// Per MoE layer and microbatch, with T_r = b·s/tp tokens a rank holds: forward, an all-gather
// of the [T_r, h] tokens (ep·T_r·h·B gathered), of the fp32 probabilities and the 1-byte map
// ([T_r, E] each), and a reduce-scatter of the gathered outputs back; backward, the
// reduce-scatter's all-gather, and the tokens' and probabilities' reduce-scatters. On the
// wire each moves (ep-1)/ep of it; no all-to-all.
TEST(MoeAllGather, DispatchGathersTheGroupsTokensAndCombineReduceScatters) {
  for (std::int64_t ep : {2, 4}) {
    const Scenario s = allgather(2, 2, ep);
    const models::Block b = models::make_layer(s, true, true);
    const double tokens = 2.0 * 2048.0 / 2.0 * static_cast<double>(ep);  // gathered rows
    const double h = tokens * 512.0 * 2.0;
    const double probs = tokens * 8.0 * 4.0;
    using Set = std::multiset<double>;
    std::map<std::pair<Phase, CollType>, Set> seen;
    for (const stg::Op& op : b.graph.ops()) {
      if (op.kind == OpKind::kCollective && op.axis == static_cast<std::uint8_t>(Axis::kEP)) {
        seen[std::make_pair(op.phase, op.coll)].insert(op.bytes);
      }
    }
    auto at = [&](Phase p, CollType c) { return seen[std::make_pair(p, c)]; };
    const Set fwd_ag{h, probs, tokens * 8.0};
    const Set one{h};
    const Set bwd_rs{h, probs};
    EXPECT_EQ(at(Phase::kForward, CollType::kAllGather), fwd_ag);
    EXPECT_EQ(at(Phase::kForward, CollType::kReduceScatter), one);
    EXPECT_EQ(at(Phase::kBackward, CollType::kAllGather), one);
    EXPECT_EQ(at(Phase::kBackward, CollType::kReduceScatter), bwd_rs);
    EXPECT_EQ(seen.size(), 4U) << "ep " << ep;  // no all-to-all
  }
}

// The rank's experts see the same rows either way: its E/ep experts' share of every EP rank's
// tokens.
TEST(MoeAllGather, ExpertGemmsAreTheAllToAllDispatchers) {
  auto fc = [](const Scenario& s, const std::string& name) {
    const models::Block b = models::make_layer(s, true, true);
    const auto& ops = b.graph.ops();
    return std::find_if(ops.begin(), ops.end(), [&](const stg::Op& o) { return o.name == name; })
        ->gemm;
  };
  for (const char* name : {"moe.experts.fc1", "moe.experts.fc2"}) {
    const graph::GemmDims a = fc(moe_scenario(2, 4, 4), name);
    const graph::GemmDims g = fc(allgather(2, 4, 4), name);
    EXPECT_EQ(g.m, a.m) << name;
    EXPECT_EQ(g.n, a.n) << name;
    EXPECT_EQ(g.k, a.k) << name;
    EXPECT_EQ(g.batch, a.batch) << name;
  }
}

TEST(MoeAllGather, BadCombinationsNameTheKey) {
  Scenario s = moe_scenario(2, 4, 2, 2);
  s.model.moe.dispatcher = MoeDispatcher::kAllGather;
  auto v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].key, "model.moe.dispatcher");
  EXPECT_EQ(v[0].message,
            "`model.moe.dispatcher: allgather` with parallelism.etp=2 is not modelled yet");
  s = allgather(1, 8, 8);
  s.parallel.ep_comm_overlap = true;
  v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].key, "parallelism.ep_comm_overlap");
  s.parallel.ep_comm_overlap.reset();
  s.model.moe.shared_expert_overlap = true;
  v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].key, "model.moe.shared_expert_overlap");
}

}  // namespace
}  // namespace tessera::synth
