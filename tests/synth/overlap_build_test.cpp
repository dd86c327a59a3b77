// SPDX-License-Identifier: Apache-2.0
// Overlap as the step's graph places it (synth/build/overlap.cpp, gradient_reduction.cpp):
// blocking pipeline sends, the parameter all-gather of the distributed optimizer before the
// forward that needs it, and one gradient bucket without overlap_grad_reduce.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "synth/build/synthesize.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using graph::NodeId;

std::vector<NodeId> named(const graph::ExecGraph& g, const graph::RankGraph& r,
                          const std::string& name) {
  std::vector<NodeId> out;
  for (NodeId i = 0; i < r.size(); ++i) {
    if (g.names[r.nodes[i].name] == name) {
      out.push_back(i);
    }
  }
  return out;
}

Scenario pipeline(std::optional<bool> overlap_p2p) {
  Scenario s = testing::gpt_scenario_unchecked(4, 256, 4, 1, 2, 1);
  s.training.overlap_p2p_comm = overlap_p2p;
  check_or_throw(s);
  return s;
}

// Megatron's 1F1B waits for its sends before the next compute: each wait node follows the
// sends of the task before it, and nothing waits when the sends overlap.
TEST(OverlapBuild, BlockingSendsGateTheNextCompute) {
  graph::ExecGraph g = synthesize(pipeline(std::nullopt));
  const graph::RankGraph& first = g.graph_of(0);
  std::vector<NodeId> waits = named(g, first, "pp.wait_sends");
  std::vector<NodeId> sends = named(g, first, "pp.send_activation");
  ASSERT_FALSE(waits.empty());
  ASSERT_EQ(sends.size(), 8U);  // 8 microbatches
  std::size_t waited = 0;
  for (NodeId w : waits) {
    EXPECT_EQ(first.nodes[w].stream, graph::Stream::kCompute);
    auto [b, e] = first.deps_of(w);
    for (const NodeId* d = b; d != e; ++d) {
      EXPECT_EQ(first.nodes[*d].kind, graph::NodeKind::kSend);
      ++waited;
    }
  }
  EXPECT_EQ(waited, sends.size() - 0U);  // stage 0's last task is a backward: no send after it
  graph::ExecGraph async = synthesize(pipeline(true));
  EXPECT_TRUE(named(async, async.graph_of(0), "pp.wait_sends").empty());
}

TEST(OverlapBuild, InterleavedOverlapsItsSendsByDefault) {
  Scenario s = testing::gpt_scenario_unchecked(4, 256, 4, 1, 2, 1);
  s.schedule.kind = ScheduleKind::kInterleaved;
  s.schedule.chunks = 2;
  check_or_throw(s);
  graph::ExecGraph g = synthesize(s);
  EXPECT_TRUE(named(g, g.graph_of(0), "pp.wait_sends").empty());
}

Scenario dist_optimizer(bool overlap_param_gather) {
  Scenario s = testing::gpt_scenario_unchecked(4, 256, 4, 1, 1, 2);
  s.training.distributed_optimizer = true;
  s.training.overlap_param_gather = overlap_param_gather;
  s.training.grad_bucket_bytes = 4.0 * 1e6;  // 1M parameters: several buckets
  check_or_throw(s);
  return s;
}

// overlap_param_gather: the gathers open the step, in the order of the forward, and a wait
// before each bucket's first forward holds the compute stream until its gather is done.
TEST(OverlapBuild, ParamGatherOverlapsTheNextForward) {
  graph::ExecGraph g = synthesize(dist_optimizer(true));
  const graph::RankGraph& r = g.graph_of(0);
  std::vector<NodeId> gathers = named(g, r, "dp.param_gather");
  std::vector<NodeId> waits = named(g, r, "dp.param_wait");
  std::vector<NodeId> buckets = named(g, r, "dp.grad_bucket");
  ASSERT_GT(gathers.size(), 1U);
  EXPECT_EQ(gathers.size(), buckets.size());
  EXPECT_EQ(waits.size(), gathers.size());
  const NodeId opt = named(g, r, "optimizer.adam").at(0);
  for (std::size_t i = 0; i < gathers.size(); ++i) {
    auto [b, e] = r.deps_of(gathers[i]);
    EXPECT_EQ(b, e);             // nothing of this step before it
    EXPECT_LT(gathers[i], opt);  // not after the optimizer
    EXPECT_EQ(r.deps_of(waits[i]).second - r.deps_of(waits[i]).first, 1);
    EXPECT_EQ(*r.deps_of(waits[i]).first, gathers[i]);  // in forward order
  }
  double gathered = 0.0;
  double reduced = 0.0;
  for (std::size_t i = 0; i < gathers.size(); ++i) {
    gathered += r.nodes[gathers[i]].bytes / 2.0;  // bf16... fp16 parameters
    reduced += r.nodes[buckets[i]].bytes / 2.0;   // fp16 main gradients
  }
  EXPECT_DOUBLE_EQ(gathered, reduced);  // the same parameters, every one once
}

TEST(OverlapBuild, ParamGatherWithoutOverlapFollowsTheOptimizer) {
  graph::ExecGraph g = synthesize(dist_optimizer(false));
  const graph::RankGraph& r = g.graph_of(0);
  const NodeId opt = named(g, r, "optimizer.adam").at(0);
  EXPECT_TRUE(named(g, r, "dp.param_wait").empty());
  for (NodeId ag : named(g, r, "dp.param_gather")) {
    auto [b, e] = r.deps_of(ag);
    ASSERT_EQ(e - b, 1);
    EXPECT_EQ(*b, opt);
  }
}

// Megatron-Core without overlap_grad_reduce sets bucket_size = None: one bucket.
TEST(OverlapBuild, OneGradientBucketWithoutOverlap) {
  Scenario s = dist_optimizer(false);
  EXPECT_GT(named(synthesize(s), synthesize(s).graph_of(0), "dp.grad_bucket").size(), 1U);
  s.training.overlap_grad_reduce = false;
  graph::ExecGraph g = synthesize(s);
  EXPECT_EQ(named(g, g.graph_of(0), "dp.grad_bucket").size(), 1U);
}

// TP communication overlap applies to the layers with sequence parallelism only.
TEST(OverlapBuild, TpCommOverlapNeedsSequenceParallelism) {
  Scenario s = testing::gpt_scenario_unchecked(2, 256, 4, 2, 1, 1);
  s.parallel.sp = true;
  check_or_throw(s);
  const std::size_t overlapped = build_programs(s).layer.ops.size();
  s.parallel.tp_comm_overlap = false;
  const std::size_t plain = build_programs(s).layer.ops.size();
  EXPECT_GT(overlapped, plain);
  s.parallel.sp = false;
  s.parallel.tp_comm_overlap = true;
  const std::size_t no_sp = build_programs(s).layer.ops.size();
  s.parallel.tp_comm_overlap = false;
  EXPECT_EQ(no_sp, build_programs(s).layer.ops.size());
}

}  // namespace
}  // namespace tessera::synth
