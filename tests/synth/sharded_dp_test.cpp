// SPDX-License-Identifier: Apache-2.0
// Sharded data parallelism (docs/sharded_data_parallel.md) against formulas_moe_cp_zero.md §4,
// computed from the synthesized graph of one rank: the all-gather and reduce-scatter bytes
// per step for each ZeRO stage, with and without resharding, under HSDP; the static memory
// per parameter; FSDP's prefetch depth, in backward under BACKWARD_PRE and _POST; and the
// input errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "synth/build/synthesize.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using graph::CollType;
using graph::Stream;

// A 4-layer GPT (hidden 512) on DP4 (pp stages), bf16 with fp32 gradients, 2 microbatches.
Scenario zero_scenario(std::int64_t zero, std::int64_t pp = 1, std::int64_t dp = 4) {
  Scenario s = testing::gpt_scenario_unchecked(4, 512, 8, 1, pp, dp);
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  s.training.global_batch = 2 * dp;
  s.parallel.zero = zero;
  check_or_throw(s);
  return s;
}

// Per collective type: the bytes of rank 0's data-parallel collectives (the whole buffer,
// before the (F-1)/F of a ring), their count, and the ranks of their groups.
struct DpTraffic {
  std::map<CollType, double> bytes;
  std::map<CollType, int> calls;
  std::map<std::size_t, int> group_sizes;
};
DpTraffic dp_traffic(const Scenario& s, std::int32_t rank = 0) {
  const graph::ExecGraph g = synthesize(s);
  DpTraffic t;
  for (const graph::Node& n : g.graph_of(rank).nodes) {
    if (n.kind != graph::NodeKind::kCollective ||
        g.groups[static_cast<std::size_t>(n.group)].kind != graph::GroupKind::kDP) {
      continue;
    }
    t.bytes[n.coll] += n.bytes;
    ++t.calls[n.coll];
    ++t.group_sizes[g.groups[static_cast<std::size_t>(n.group)].ranks.size()];
  }
  return t;
}

// Rank 0's parameters: its unsharded weights are 2 bytes each.
double params_of(const Scenario& s, std::int32_t rank = 0) {
  Scenario plain = s;
  plain.parallel.zero = 0;
  plain.parallel.dp_shard = 0;
  plain.training.reshard_after_forward.reset();
  return static_cast<double>(synthesize(plain).graph_of(rank).weight_memory) / 2.0;
}

// §4.1: ZeRO-1 reduce-scatters once (the last backward) and gathers after the step; ZeRO-2
// reduce-scatters in every backward; ZeRO-3 also gathers each unit before every forward and
// backward. Gradients move in fp32 (4 B), weights in bf16 (2 B); m = 2 microbatches.
TEST(ShardedDataParallel, CollectiveBytesPerStepFollowTheStage) {
  const double p = params_of(zero_scenario(0));
  const double m = 2.0;
  struct Case {
    std::int64_t zero;
    double all_reduce, reduce_scatter, all_gather;
  };
  for (const Case& c :
       {Case{0, 4.0 * p, 0.0, 0.0}, Case{1, 0.0, 4.0 * p, 2.0 * p},
        Case{2, 0.0, m * 4.0 * p, 2.0 * p}, Case{3, 0.0, m * 4.0 * p, 2.0 * m * 2.0 * p}}) {
    DpTraffic t = dp_traffic(zero_scenario(c.zero));
    EXPECT_DOUBLE_EQ(t.bytes[CollType::kAllReduce], c.all_reduce) << "zero " << c.zero;
    EXPECT_DOUBLE_EQ(t.bytes[CollType::kReduceScatter], c.reduce_scatter) << "zero " << c.zero;
    EXPECT_DOUBLE_EQ(t.bytes[CollType::kAllGather], c.all_gather) << "zero " << c.zero;
  }
  // Units: the embedding, 4 layers and the head, each gathered twice per microbatch.
  EXPECT_EQ(dp_traffic(zero_scenario(3)).calls[CollType::kAllGather], 6 * 2 * 2);
  EXPECT_EQ(dp_traffic(zero_scenario(3)).calls[CollType::kReduceScatter], 6 * 2);
}

// §4.2: reshard_after_forward: false drops the backward's gather. Under a pipeline schedule
// the stage keeps its units gathered (and their gradients whole) for the step: each layer is
// gathered once per step and reduced once.
TEST(ShardedDataParallel, NoReshardGathersOncePerForwardOrOncePerStepUnderPp) {
  const double m = 2.0;
  Scenario flat = zero_scenario(3);
  flat.training.reshard_after_forward = false;
  const double p = params_of(flat);
  DpTraffic t = dp_traffic(flat);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kAllGather], m * 2.0 * p);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kReduceScatter], m * 4.0 * p);

  Scenario piped = zero_scenario(3, 2, 2);
  piped.training.global_batch = 8;
  piped.training.reshard_after_forward = false;
  check_or_throw(piped);
  const double stage = params_of(piped);
  t = dp_traffic(piped);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kAllGather], 2.0 * stage);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kReduceScatter], 4.0 * stage);
  EXPECT_EQ(t.calls[CollType::kAllGather], 3) << "the embedding and two layers, once each";
}

// §4.2 HSDP: the reduce-scatter runs in the shard group (dp_shard ranks), then the shard's
// all-reduce over the dp / dp_shard replicas; the gathers stay in the shard group.
TEST(ShardedDataParallel, HsdpReducesTheShardOverTheReplicas) {
  Scenario s = zero_scenario(3, 1, 4);
  s.parallel.dp_shard = 2;
  check_or_throw(s);
  const double p = params_of(s);
  const double m = 2.0;
  DpTraffic t = dp_traffic(s);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kReduceScatter], m * 4.0 * p);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kAllReduce], m * 4.0 * p / 2.0);
  EXPECT_DOUBLE_EQ(t.bytes[CollType::kAllGather], 2.0 * m * 2.0 * p);
  EXPECT_EQ(t.group_sizes.size(), 1U) << "shard groups and replica groups both of 2 ranks";
  EXPECT_EQ(t.group_sizes.begin()->first, 2U);
}

// §4.1 memory per parameter with fp32 main gradients (K = 12): 18, 6 + 12/F, 2 + 16/F, 18/F;
// HSDP shards over F = dp_shard.
TEST(ShardedDataParallel, StaticMemoryPerParameterFollowsTheShards) {
  const double p = params_of(zero_scenario(0));
  const double f = 4.0;
  const double expect[] = {18.0, 6.0 + 12.0 / f, 2.0 + 16.0 / f, 18.0 / f};
  for (std::int64_t zero = 0; zero <= 3; ++zero) {
    const graph::ExecGraph g = synthesize(zero_scenario(zero));
    EXPECT_NEAR(static_cast<double>(g.graph_of(0).static_memory) / p, expect[zero], 1e-6)
        << "zero " << zero;
  }
  Scenario hsdp = zero_scenario(3);
  hsdp.parallel.dp_shard = 2;
  EXPECT_NEAR(static_cast<double>(synthesize(hsdp).graph_of(0).static_memory) / p, 18.0 / 2.0,
              1e-6);
}

// ZeRO-3's gathers run on a stream of their own; after the first two, each waits for the
// unit two before it to finish (FSDP2's prefetch: the next unit gathers while this one
// computes, two units unsharded at a time), and every gathered byte is released.
TEST(ShardedDataParallel, GathersPrefetchOneUnitAhead) {
  const graph::ExecGraph g = synthesize(zero_scenario(3));
  const graph::RankGraph& r = g.graph_of(0);
  int gathers = 0;
  std::int64_t held = 0;
  for (graph::NodeId i = 0; i < r.nodes.size(); ++i) {
    const graph::Node& n = r.nodes[i];
    held += n.comm_alloc - n.comm_free;
    if (n.kind != graph::NodeKind::kCollective || n.coll != CollType::kAllGather) {
      continue;
    }
    EXPECT_EQ(n.stream, Stream::kDPGather);
    auto [b, e] = r.deps_of(i);
    EXPECT_EQ(e - b, gathers < 2 ? 0 : 1) << "gather " << gathers;
    ++gathers;
  }
  EXPECT_EQ(held, 0);
}

// FSDP1's backward_prefetch (docs/sharded_data_parallel.md §2): under `pre` a backward gather
// waits for the unit two before it in backward order, overlapping the one between; under
// `post` for the unit just before, after its gradients and the release of its weights, so
// that it overlaps only that unit's reduce-scatter. Forward gathers keep FSDP's two in flight.
TEST(ShardedDataParallel, BackwardPostGathersAfterThePreviousUnit) {
  // For each gather: how many unit releases lie between the node it waits for and itself.
  auto releases_between = [](const Scenario& s, graph::Phase phase) {
    const graph::ExecGraph g = synthesize(s);
    const graph::RankGraph& r = g.graph_of(0);
    std::vector<int> out;
    for (graph::NodeId i = 0; i < r.nodes.size(); ++i) {
      const graph::Node& n = r.nodes[i];
      if (n.kind != graph::NodeKind::kCollective || n.coll != CollType::kAllGather ||
          n.phase != phase) {
        continue;
      }
      auto [b, e] = r.deps_of(i);
      if (e - b != 1) {
        continue;  // the first gathers of a step wait for nothing
      }
      int count = 0;
      for (graph::NodeId j = *b + 1; j < i; ++j) {
        count += r.nodes[j].comm_free > 0 && r.nodes[j].kind != graph::NodeKind::kCollective;
      }
      out.push_back(count);
    }
    return out;
  };
  Scenario pre = zero_scenario(3);
  Scenario post = pre;
  post.training.backward_prefetch = BackwardPrefetch::kPost;
  check_or_throw(post);
  const std::vector<int> pre_bwd = releases_between(pre, graph::Phase::kBackward);
  const std::vector<int> post_bwd = releases_between(post, graph::Phase::kBackward);
  ASSERT_FALSE(post_bwd.empty());
  EXPECT_EQ(pre_bwd.size(), post_bwd.size());
  for (std::size_t k = 0; k < post_bwd.size(); ++k) {
    EXPECT_EQ(post_bwd[k], 0) << "gather " << k << ": nothing released after what it waits for";
    EXPECT_GE(pre_bwd[k], 1) << "gather " << k << ": one unit in between";
  }
  EXPECT_EQ(releases_between(pre, graph::Phase::kForward),
            releases_between(post, graph::Phase::kForward));
}

// FP8 under ZeRO-3: a layer's FP8 weight copies are cast after each of its gathers (a forward
// and a backward per microbatch) and freed with the gathered weights, so that only the scaling
// state is static; every allocation is freed by the end of the step.
TEST(ShardedDataParallel, Fp8CopiesComeAndGoWithTheGatheredWeights) {
  Scenario bf16 = zero_scenario(3);
  Scenario fp8 = bf16;
  fp8.training.fp8 = Fp8Recipe::kDelayed;
  fp8.cluster.hardware = "h100-sxm";  // Hopper: a row-wise and a transposed copy
  check_or_throw(fp8);
  const graph::ExecGraph g = synthesize(fp8);
  const graph::RankGraph& r = g.graph_of(0);
  int casts = 0;
  std::int64_t alloc = 0;
  std::int64_t freed = 0;
  for (const graph::Node& n : r.nodes) {
    const std::string& name = g.names[n.name];
    casts += name.find(".fp8.cast") != std::string::npos && name.ends_with("_weight") ? 1 : 0;
    alloc += n.mem_alloc;
    freed += n.mem_free;
  }
  EXPECT_EQ(casts, 4 * 2 * 2) << "4 layers, 2 microbatches, a forward and a backward gather";
  EXPECT_EQ(alloc, freed);
  const std::int64_t extra = r.static_memory - synthesize(bf16).graph_of(0).static_memory;
  EXPECT_GT(extra, 0) << "the scaling state";
  EXPECT_LT(extra, 4096) << "no FP8 weight copy is static";
}

// fp8_param_gather (Megatron's --fp8-param-gather) on Hopper: the linear weights, w = 4 layers
// x 12 h^2 elements, are kept in FP8 and gathered at 1 byte, so ZeRO-1's gather after the step
// carries 2p - w bytes and ZeRO-3's every gather its unit's 2 p_u - w_u (2 m (2p - w) a step);
// no weight is cast from bf16, a gathered layer only transposed (read and write w_u bytes), and
// ZeRO-1's stored weights lose their bf16 copy (2w bytes).
TEST(ShardedDataParallel, Fp8ParamGatherMovesAndKeepsFp8Weights) {
  const double p = params_of(zero_scenario(0));
  const double w = 4.0 * 12.0 * 512.0 * 512.0;
  const double m = 2.0;
  auto fp8 = [](std::int64_t zero, bool gather) {
    Scenario s = zero_scenario(zero);
    s.training.fp8 = Fp8Recipe::kDelayed;
    s.training.fp8_param_gather = gather;
    s.cluster.hardware = "h100-sxm";
    check_or_throw(s);
    return s;
  };
  EXPECT_DOUBLE_EQ(dp_traffic(fp8(1, true)).bytes[CollType::kAllGather], 2.0 * p - w);
  EXPECT_DOUBLE_EQ(dp_traffic(fp8(3, true)).bytes[CollType::kAllGather], 2.0 * m * (2.0 * p - w));
  EXPECT_DOUBLE_EQ(static_cast<double>(synthesize(fp8(1, false)).graph_of(0).weight_memory -
                                       synthesize(fp8(1, true)).graph_of(0).weight_memory),
                   2.0 * w);
  const graph::ExecGraph g = synthesize(fp8(3, true));
  std::map<std::string, double> bytes;
  std::map<std::string, int> count;
  for (const graph::Node& n : g.graph_of(0).nodes) {
    const std::string& name = g.names[n.name];
    if (name.ends_with("_weight")) {
      bytes[name.substr(name.find(".fp8.") + 1)] += n.bytes;
      ++count[name.substr(name.find(".fp8.") + 1)];
    }
  }
  ASSERT_EQ(count.size(), 1U) << count.begin()->first;
  EXPECT_EQ(count["fp8.transpose_weight"], 4 * 2 * 2);
  EXPECT_DOUBLE_EQ(bytes["fp8.transpose_weight"], 2.0 * m * 2.0 * w);
}

TEST(ShardedDataParallel, BadInputNamesTheKey) {
  auto first = [](const Scenario& s) {
    const auto v = validate(s);
    return v.empty() ? std::string() : v[0].key + ": " + v[0].message;
  };
  // Sharding over one rank shards nothing, and Megatron and FSDP accept it.
  Scenario s = testing::gpt_scenario_unchecked(4, 512, 8, 2, 2, 1);
  s.parallel.zero = 2;
  EXPECT_EQ(first(s), "");
  s.parallel.zero.reset();
  s.training.distributed_optimizer = true;
  EXPECT_EQ(first(s), "");
  s = zero_scenario(3, 1, 4);
  s.parallel.dp_shard = 3;
  EXPECT_EQ(first(s),
            "parallelism.dp_shard: dp_shard=3 does not divide dp=4: HSDP shards within groups "
            "of dp_shard data-parallel ranks and replicates across dp / dp_shard of them");
  s = zero_scenario(2);
  s.training.reshard_after_forward = false;
  EXPECT_EQ(first(s),
            "training.reshard_after_forward: reshard_after_forward says whether ZeRO-3 gathers "
            "the weights again for the backward; zero is 2");
  s = zero_scenario(2);
  s.training.backward_prefetch = BackwardPrefetch::kPost;
  EXPECT_EQ(first(s),
            "training.backward_prefetch: backward_prefetch says when ZeRO-3 gathers a unit's "
            "weights for its backward; zero is 2");
  s = zero_scenario(0);
  s.parallel.dp_shard = 2;
  EXPECT_EQ(first(s).rfind("parallelism.dp_shard: dp_shard sizes the groups", 0), 0U);
  s = zero_scenario(0);
  s.training.distributed_optimizer = true;
  EXPECT_EQ(first(s),
            "parallelism.zero: zero: 0 contradicts training.distributed_optimizer: true, which "
            "shards the optimizer's state (ZeRO-1)");
  s = zero_scenario(3);
  s.training.distributed_optimizer = true;
  EXPECT_EQ(first(s), "") << "every stage from 1 on shards the optimizer";
}

}  // namespace
}  // namespace tessera::synth
