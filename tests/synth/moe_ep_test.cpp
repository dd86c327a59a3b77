// SPDX-License-Identifier: Apache-2.0
// Expert parallelism (docs/moe.md) against the closed forms of formulas_moe_cp_zero.md §1:
// the folded expert mesh, the dispatch and combine all-to-alls, the experts' gradient
// reduction over expert data parallelism and their optimizer memory, and the input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "synth/build/synthesize.h"
#include "synth/models/transformer.h"
#include "synth/parallel/mesh.h"
#include "tests/synth/moe_fixtures.h"

namespace tessera::synth {
namespace {

using stg::OpKind;
using testing::moe_scenario;

// Megatron-Core's folding: a stage's local index (tp innermost, then dp) split into etp, ep,
// edp. With tp = 2, dp = 4: etp = 1, ep = 4 puts the EP group over both TP ranks of two DP
// replicas; etp = 2, ep = 2 makes the ETP group the TP group and EP a DP subgroup.
TEST(MoeEp, ExpertAxesFoldTheStageDevices) {
  ParallelConfig p;
  p.tp = 2;
  p.dp = 4;
  p.pp = 2;
  p.ep = 4;
  parallel::Mesh m(p);
  EXPECT_EQ(m.group(0, Axis::kEP), (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(m.group(0, Axis::kEDP), (std::vector<std::int32_t>{0, 4}));
  EXPECT_EQ(m.group(13, Axis::kEP), (std::vector<std::int32_t>{12, 13, 14, 15}));
  p.ep = 2;
  p.etp = 2;
  parallel::Mesh f(p);
  EXPECT_EQ(f.group(0, Axis::kETP), f.group(0, Axis::kTP));
  EXPECT_EQ(f.group(0, Axis::kEP), (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(f.group(0, Axis::kEDP), (std::vector<std::int32_t>{0, 4}));
  EXPECT_EQ(f.coord(7)[Axis::kEP], 1);
  EXPECT_EQ(f.coord(7)[Axis::kEDP], 1);
}

// §1.3, alltoall dispatcher: the dispatch and the combine are each one all-to-all over the EP
// group of the rank's T_r·k rows (T_r = b·s/tp), and backward repeats each at the same size;
// the rank keeps 1/ep of the rows and sends (ep-1)/ep of them.
TEST(MoeEp, DispatchAndCombineAreAllToAllsOfTheRoutedRows) {
  for (std::int64_t ep : {2, 4}) {
    Scenario s = moe_scenario(2, 2, ep);
    models::Block b = models::make_layer(s, true, true);
    const double rows_bytes = 2.0 * 2048.0 / 2.0 * 2.0 * 512.0 * 2.0;  // T_r·k·h·B
    int fwd = 0;
    int bwd = 0;
    for (const stg::Op& op : b.graph.ops()) {
      if (op.kind != OpKind::kCollective || op.coll != graph::CollType::kAllToAll) {
        continue;
      }
      EXPECT_EQ(op.axis, static_cast<std::uint8_t>(Axis::kEP)) << op.name;
      EXPECT_DOUBLE_EQ(op.bytes, rows_bytes) << op.name;
      (op.phase == graph::Phase::kForward ? fwd : bwd) += 1;
    }
    EXPECT_EQ(fwd, 2) << "ep " << ep;
    EXPECT_EQ(bwd, 2) << "ep " << ep;
  }
}

// The experts' GEMMs see every row their EP group sends them: M = T_r·k/E·ep·etp per expert,
// batched over the E/ep local experts.
TEST(MoeEp, ExpertGemmsRunTheGroupsRows) {
  Scenario s = moe_scenario(2, 4, 2, 2);
  models::Block b = models::make_layer(s, true, true);
  const auto fc1 = std::find_if(b.graph.ops().begin(), b.graph.ops().end(),
                                [](const stg::Op& op) { return op.name == "moe.experts.fc1"; });
  ASSERT_NE(fc1, b.graph.ops().end());
  EXPECT_EQ(fc1->gemm.batch, 8 / 2);
  EXPECT_EQ(fc1->gemm.m, 2 * 2048 / 2 * 2 / 8 * 2 * 2);
  EXPECT_EQ(fc1->gemm.n, 2 * 768 / 2);
  EXPECT_EQ(fc1->gemm.k, 512);
}

// §1.5: the routed experts' gradients are reduced over the expert-data-parallel group (edp =
// tp·dp/(ep·etp)), everything else over DP; the distributed optimizer shards each over its
// group (§1.2: 2 + 4 + 12/edp bytes per expert parameter).
TEST(MoeEp, ExpertGradientsReduceOverEdpAndShardTheOptimizer) {
  Scenario s = moe_scenario(2, 4, 4);  // EP {0, 1, 2, 3}, EDP {0, 4}: edp = 2·4/4 = 2
  s.training.distributed_optimizer = true;
  const graph::ExecGraph g = synthesize(s, {.share_rank_classes = false});
  const graph::RankGraph& r0 = g.graph_of(0);
  double dp_bytes = 0.0;
  double edp_bytes = 0.0;
  for (const graph::Node& n : r0.nodes) {
    if (n.kind != graph::NodeKind::kCollective || n.coll != graph::CollType::kReduceScatter ||
        n.phase != graph::Phase::kBackward || n.stream != graph::Stream::kDP) {
      continue;
    }
    const graph::Group& grp = g.groups[static_cast<std::size_t>(n.group)];
    const bool edp = grp.ranks == parallel::Mesh(s.parallel).group(0, Axis::kEDP);
    (edp ? edp_bytes : dp_bytes) += n.bytes;
  }
  const StepPrograms p = build_programs(s);
  const double experts = p.sum_layers(&parallel::BlockProgram::expert_params);
  const double all = p.embed.params + p.head.params + p.sum_layers(&parallel::BlockProgram::params);
  EXPECT_DOUBLE_EQ(edp_bytes, experts * 4.0);  // fp32 main gradients
  EXPECT_DOUBLE_EQ(dp_bytes, (all - experts) * 4.0);
  EXPECT_GT(experts, 0.0);
  const double expect = (all - experts) * (6.0 + 12.0 / 4.0) + experts * (6.0 + 12.0 / 2.0);
  EXPECT_EQ(r0.static_memory, static_cast<std::int64_t>(expect));
  Scenario wide = moe_scenario(2, 4, 8);  // edp = 1: the experts' optimizer is not sharded
  wide.training.distributed_optimizer = true;
  const graph::ExecGraph w = synthesize(wide, {.share_rank_classes = false});
  const StepPrograms wp = build_programs(wide);
  const double we = wp.sum_layers(&parallel::BlockProgram::expert_params);
  const double wall =
      wp.embed.params + wp.head.params + wp.sum_layers(&parallel::BlockProgram::params);
  EXPECT_EQ(w.graph_of(0).static_memory,
            static_cast<std::int64_t>((wall - we) * (6.0 + 12.0 / 4.0) + we * 18.0));
}

// Megatron-Core's --moe-shared-expert-overlap: the dispatch all-to-all is issued before the
// shared experts, which compute while it is in flight; without it they follow the combine.
TEST(MoeEp, SharedExpertOverlapIssuesTheDispatchFirst) {
  for (bool overlap : {false, true}) {
    Scenario s = moe_scenario(1, 8, 8);
    s.model.moe.shared_expert_overlap = overlap;
    const models::Block b = models::make_layer(s, true, true);
    int dispatch = -1;
    int shared = -1;
    int combine = -1;
    int all_to_alls = 0;
    for (std::size_t i = 0; i < b.graph.ops().size(); ++i) {
      const stg::Op& op = b.graph.ops()[i];
      if (op.phase != graph::Phase::kForward) {
        continue;
      }
      if (op.coll == graph::CollType::kAllToAll && op.kind == OpKind::kCollective) {
        (all_to_alls++ == 0 ? dispatch : combine) = static_cast<int>(i);
      }
      if (shared < 0 && op.name.starts_with("moe.shared.fc1")) {
        shared = static_cast<int>(i);
      }
    }
    ASSERT_EQ(all_to_alls, 2);
    if (overlap) {
      EXPECT_LT(dispatch, shared);
      EXPECT_LT(shared, combine);
    } else {
      EXPECT_GT(shared, combine);
    }
  }
}

// The host's work (docs/compute_model.md §4): the router's forward returns the token counts
// to the host (a sync, in the recompute too, not in the backward); Transformer Engine's
// GroupedLinear issues the expert GEMMs and FP8 casts expert by expert, E/ep local experts
// each, where one grouped kernel (grouped_gemm: single) issues them once.
TEST(MoeEp, TheRouterSyncsTheHostAndGroupedLinearIssuesPerExpert) {
  for (const GroupedGemm gg : {GroupedGemm::kPerExpert, GroupedGemm::kSingle}) {
    Scenario s = moe_scenario(1, 8, 4);  // 8 experts over ep 4: 2 local experts
    s.model.moe.grouped_gemm = gg;
    s.training.recompute = Recompute::kFull;
    const graph::ExecGraph g = synthesize(s, {.share_rank_classes = false});
    int syncs = 0;
    int per_expert = 0;
    for (const graph::Node& n : g.graph_of(0).nodes) {
      syncs += n.host_sync ? 1 : 0;
      if (n.host_sync) {
        EXPECT_NE(n.phase, graph::Phase::kBackward);
      }
      if (n.host_experts > 0) {
        EXPECT_EQ(n.host_experts, 2);
        EXPECT_EQ(n.op, graph::OpClass::kGemm);  // bf16: no casts
        ++per_expert;
      }
    }
    const int moe_layers = 4;  // moe_scenario: four layers, all MoE
    const int microbatches = 2;
    EXPECT_EQ(syncs, 2 * moe_layers * microbatches);  // forward and recompute
    // fc1 and fc2: forward, recompute, dgrad and wgrad each.
    EXPECT_EQ(per_expert, gg == GroupedGemm::kPerExpert ? 8 * moe_layers * microbatches : 0);
  }
}

TEST(MoeEp, BadExpertParallelismNamesTheKey) {
  Scenario s = moe_scenario(2, 4);
  s.parallel.ep = 3;
  auto v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].key, "parallelism.ep");
  EXPECT_EQ(v[0].message, "ep=3 does not divide model.moe.experts=8");
  s.parallel.ep = 8;
  s.parallel.etp = 2;
  v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].message,
            "ep x etp = 8 x 2 = 16 does not divide the 8 devices of a pipeline stage (tp x dp = "
            "2 x 4): the experts fold a stage's devices into etp x ep x edp");
  s = moe_scenario(2, 4);
  s.parallel.etp = 2;
  s.model.moe.expert_ffn = 769;
  v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].message, "etp=2 does not divide model.moe.expert_ffn=769");
  s = testing::gpt_scenario_unchecked(4, 512, 8, 2, 1, 4);
  s.parallel.ep = 4;
  v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].key, "parallelism.ep");
  EXPECT_EQ(v[0].message, "ep=4 needs a model with experts (model.moe)");
}

}  // namespace
}  // namespace tessera::synth
