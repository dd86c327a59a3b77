// SPDX-License-Identifier: Apache-2.0
// Small whole-pipeline scenarios built in code, with the cluster and profile they run on.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "hwprofiles/hw_profile.h"
#include "sim/simulation.h"
#include "synth/build/synthesize.h"
#include "synth/scenario/scenario.h"
#include "synth/scenario/validate.h"
#include "tests/synth/synth_fixtures.h"
#include "topology/cluster.h"

namespace tessera::integration {

struct Case {
  std::string name;
  synth::Scenario scenario;
};

// gtest prints a parameter with this instead of its bytes.
inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

// Like scenarios/tiny.yaml: 2 layers, hidden 256, 4 heads, seq 128, TP2 PP2 DP2 and 1F1B on
// the 8 H100s of one node.
inline synth::Scenario tiny_like(std::int64_t tp = 2, std::int64_t pp = 2, std::int64_t dp = 2) {
  synth::Scenario s = synth::testing::gpt_scenario_unchecked(2, 256, 4, tp, pp, dp);
  s.name = "tiny-like";
  s.model.preset = "";
  s.model.vocab = 32000;
  s.training.seq_len = 128;
  s.training.micro_batch = 2;
  s.training.global_batch = 8;
  s.training.precision = base::DType::kBF16;
  s.training.attention = synth::AttentionKernel::kFlash;
  s.schedule.kind = synth::ScheduleKind::k1F1B;
  s.cluster.hardware = "h100-sxm";
  s.cluster.topology = topology::load_topology_preset("single-node", {});
  s.cluster.devices = tp * pp * dp;
  return s;
}

inline std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"tiny_tp2_pp2_dp2", tiny_like()});

  synth::Scenario sp = tiny_like(2, 1, 4);
  sp.parallel.sp = true;
  sp.training.global_batch = 16;
  out.push_back({"tp2_dp4_sp", sp});

  synth::Scenario gpipe = tiny_like(1, 4, 2);
  gpipe.model.layers = 4;
  gpipe.training.global_batch = 16;
  gpipe.schedule.kind = synth::ScheduleKind::kGpipe;
  out.push_back({"pp4_dp2_gpipe", gpipe});

  synth::Scenario two_node = tiny_like(4, 2, 2);
  two_node.model.layers = 4;
  two_node.training.global_batch = 16;
  two_node.training.distributed_optimizer = true;
  two_node.training.recompute = synth::Recompute::kSelective;
  two_node.cluster.topology = topology::load_topology_preset("dgx-h100-superpod", {});
  out.push_back({"two_node_tp4_pp2_dp2_distopt_selective", two_node});

  // The same with the data-parallel groups spanning the two nodes (TP innermost, DP outermost).
  synth::Scenario dp_across = two_node;
  dp_across.parallel.order = {synth::Axis::kTP, synth::Axis::kPP, synth::Axis::kDP};
  out.push_back({"two_node_dp_across_nodes", dp_across});

  // Tied embeddings over four stages: the first and last stages all-reduce the table's
  // gradient; non-overlapped data-parallel reduction (LocalDDP).
  synth::Scenario tied = tiny_like(1, 4, 2);
  tied.model.layers = 4;
  tied.model.tied_embeddings = true;
  tied.training.global_batch = 16;
  tied.training.overlap_grad_reduce = false;
  out.push_back({"pp4_dp2_tied_embeddings_no_overlap", tied});

  // Megatron's interleaved schedule, with a group size that is not p (wrap-around sends).
  synth::Scenario inter = tiny_like(1, 4, 2);
  inter.model.layers = 8;
  inter.training.global_batch = 24;
  inter.training.micro_batch = 1;
  inter.schedule.kind = synth::ScheduleKind::kInterleaved;
  inter.schedule.chunks = 2;
  inter.schedule.group = 6;
  out.push_back({"pp4_dp2_interleaved_v2_g6", inter});

  // Zero-bubble ZB-H1: backward split into input- and weight-gradient halves, with SP and
  // selective recompute so that deferred weight gradients keep re-gathered inputs alive.
  synth::Scenario zb = tiny_like(2, 4, 1);
  zb.model.layers = 8;
  zb.training.global_batch = 8;
  zb.training.micro_batch = 1;
  zb.parallel.sp = true;
  zb.training.recompute = synth::Recompute::kSelective;
  zb.schedule.kind = synth::ScheduleKind::kZbH1;
  out.push_back({"tp2_pp4_zb_h1_sp_selective", zb});

  // DualPipeV: V placement (the last rank turns chunk 0 into chunk 1 locally), split
  // backward, tied embeddings on one rank.
  synth::Scenario dpv = tiny_like(1, 4, 2);
  dpv.model.layers = 8;
  dpv.model.tied_embeddings = true;
  dpv.training.global_batch = 16;
  dpv.training.micro_batch = 1;
  dpv.schedule.kind = synth::ScheduleKind::kDualPipeV;
  out.push_back({"pp4_dp2_dualpipev_tied", dpv});

  // Uneven pipeline splits (Megatron-Core's first/last-stage layer counts, or a list per
  // virtual stage) under the schedules whose stages differ most.
  synth::Scenario uneven = tiny_like(1, 4, 2);
  uneven.model.layers = 7;
  uneven.training.global_batch = 16;
  uneven.parallel.stage_layers = {1, 2, 2, 2};
  out.push_back({"pp4_uneven_1f1b", uneven});
  synth::Scenario uneven_inter = inter;
  uneven_inter.model.layers = 10;
  uneven_inter.parallel.stage_layers = {1, 1, 1, 1, 2, 2, 1, 1};
  out.push_back({"pp4_uneven_interleaved", uneven_inter});
  synth::Scenario uneven_zb = zb;
  uneven_zb.model.layers = 8;
  uneven_zb.parallel.stage_layers = {3, 2, 2, 1};
  out.push_back({"tp2_pp4_uneven_zb_h1", uneven_zb});
  synth::Scenario uneven_dpv = dpv;
  uneven_dpv.model.layers = 9;
  uneven_dpv.parallel.stage_layers = {2, 1, 1, 1, 1, 1, 1, 1};
  out.push_back({"pp4_uneven_dualpipev", uneven_dpv});
  // FP8 training (docs/fp8.md): delayed scaling with SP on Hopper (transposed copies,
  // FP8 all-gathers), current scaling on Blackwell, blockwise under ZB-H1's split backward.
  synth::Scenario fp8 = sp;
  fp8.training.fp8 = synth::Fp8Recipe::kDelayed;
  out.push_back({"tp2_dp4_sp_fp8_delayed", fp8});
  synth::Scenario fp8_b200 = tiny_like();
  fp8_b200.training.fp8 = synth::Fp8Recipe::kTensorwise;
  fp8_b200.cluster.hardware = "b200";
  out.push_back({"tiny_fp8_tensorwise_b200", fp8_b200});
  synth::Scenario fp8_zb = zb;
  fp8_zb.training.fp8 = synth::Fp8Recipe::kBlockwise;
  out.push_back({"tp2_pp4_zb_h1_fp8_blockwise", fp8_zb});
  // Mixture of experts (docs/moe.md): experts over an EP group spanning the TP ranks (etp 1),
  // and over two nodes with expert tensor parallelism and the distributed optimizer sharding
  // the experts over their expert-data-parallel group.
  synth::Scenario moe = tiny_like(2, 2, 2);
  moe.parallel.sp = true;
  moe.model.moe = {.experts = 8, .top_k = 2, .expert_ffn = 256};
  moe.parallel.ep = 4;
  out.push_back({"moe_tp2_pp2_dp2_ep4", moe});
  synth::Scenario moe_ag = moe;  // the all-gather dispatcher
  moe_ag.model.moe.dispatcher = synth::MoeDispatcher::kAllGather;
  out.push_back({"moe_tp2_pp2_dp2_ep4_allgather", moe_ag});
  synth::Scenario moe_etp = two_node;
  moe_etp.parallel.sp = true;
  moe_etp.model.moe = {.experts = 4, .top_k = 2, .expert_ffn = 512, .shared_experts = 1};
  moe_etp.parallel.ep = 2;
  moe_etp.parallel.etp = 2;
  out.push_back({"moe_two_node_ep2_etp2_distopt", moe_etp});
  // Multi-token prediction on the last of two stages: its embedding copy's gradient joins the
  // first stage's over the embedding group.
  synth::Scenario mtp = moe;
  mtp.model.mtp_depth = 1;
  out.push_back({"moe_mtp_pp2", mtp});
  // Pipeline layouts (docs/pipeline_schedules.md): multi-token prediction on a stage of its
  // own before the loss's, its embedding copy and the tied output layer's joining the first
  // stage's (a group of three); and an interleaved pipe with a stage that holds nothing.
  synth::Scenario mtp_apart = tiny_like(1, 4, 2);
  mtp_apart.parallel.sp = false;
  mtp_apart.model.layers = 3;
  mtp_apart.training.global_batch = 16;
  mtp_apart.model.moe = {.experts = 8, .top_k = 2, .expert_ffn = 256};
  mtp_apart.parallel.ep = 2;
  mtp_apart.model.mtp_depth = 1;
  mtp_apart.model.tied_embeddings = true;
  mtp_apart.parallel.layout = {
      {.embeddings = 1, .layers = 1}, {.layers = 2}, {.mtp = 1}, {.losses = 1}};
  mtp_apart.parallel.stage_layers = {1, 2, 0, 0};
  out.push_back({"moe_pp4_layout_mtp_apart", mtp_apart});
  synth::Scenario empty_stage = inter;
  empty_stage.model.tied_embeddings = true;
  empty_stage.parallel.layout = {{.embeddings = 1, .layers = 1},
                                 {.layers = 1},
                                 {.layers = 1},
                                 {},
                                 {.layers = 2},
                                 {.layers = 1},
                                 {.layers = 1},
                                 {.layers = 1, .losses = 1}};
  empty_stage.parallel.stage_layers = {1, 1, 1, 0, 2, 1, 1, 1};
  out.push_back({"interleaved_layout_empty_stage", empty_stage});
  // Overlapped all-to-alls (docs/moe.md, "Overlap"): combined 1F1B on the interleaved
  // schedule across two nodes, and DualPipeV's pairs, which overlap by default.
  synth::Scenario combined = moe_etp;
  combined.schedule.kind = synth::ScheduleKind::kInterleaved;
  combined.schedule.chunks = 2;
  combined.parallel.ep_comm_overlap = true;
  out.push_back({"moe_two_node_interleaved_combined_1f1b", combined});
  synth::Scenario moe_dpv = moe;
  moe_dpv.schedule.kind = synth::ScheduleKind::kDualPipeV;
  moe_dpv.model.layers = 4;
  moe_dpv.training.global_batch = 16;
  out.push_back({"moe_dualpipev_ep4", moe_dpv});
  // Context parallelism, each way its attention communicates, with PP and DP (the CP and
  // data-parallel-with-CP groups relabelled per class); ring attention across two nodes.
  for (auto [name, comm] : {std::pair{"cp2_allgather_pp2_dp2", synth::CpComm::kAllGather},
                            std::pair{"cp2_a2a_pp2_dp2", synth::CpComm::kA2A},
                            std::pair{"cp2_p2p_pp2_dp2", synth::CpComm::kP2P}}) {
    synth::Scenario cp = tiny_like(1, 2, 2);
    cp.parallel.cp = 2;
    cp.parallel.cp_comm = comm;
    cp.cluster.devices = 8;
    out.push_back({name, cp});
  }
  synth::Scenario ring = tiny_like(4, 2, 1);
  ring.model.heads = 8;
  ring.parallel.sp = true;
  ring.parallel.cp = 4;
  ring.parallel.cp_comm = synth::CpComm::kP2P;
  ring.cluster.devices = 32;
  ring.cluster.topology = topology::load_topology_preset("dgx-h100-superpod", {});
  out.push_back({"two_node_ring_cp4_tp4_pp2", ring});
  // Sharded data parallelism: ZeRO-3 over the data-parallel group, and HSDP (shards of 2).
  synth::Scenario zero3 = tiny_like(1, 2, 4);
  zero3.training.global_batch = 16;
  zero3.parallel.zero = 3;
  out.push_back({"zero3_pp2_dp4", zero3});
  synth::Scenario hsdp = zero3;
  hsdp.parallel.dp_shard = 2;
  out.push_back({"hsdp_zero3_pp2_dp4_shard2", hsdp});
  for (const Case& c : out) {
    synth::check_or_throw(c.scenario);  // what the loader would accept, checked the same way
  }
  return out;
}

// The graphs of one step and what simulating them produced.
struct Outcome {
  graph::ExecGraph graph;
  sim::RunStats stats;
};

// Synthesizes and simulates `s`, with rank-class sharing on in both or off in both.
inline Outcome run(const synth::Scenario& s, bool share, bool timeline = false) {
  synth::check_or_throw(s);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  Outcome o;
  o.graph = synth::synthesize(s, {.share_rank_classes = share});
  sim::SimOptions opt;
  opt.record_timeline = timeline;
  opt.share_rank_classes = share;
  opt.dtype = s.training.precision;
  o.stats = sim::simulate(o.graph, cluster, profile, opt);
  return o;
}

// Every per-rank figure of two runs equal, exactly.
inline void expect_same_rank(const sim::RankStats& a, const sim::RankStats& b,
                             const std::string& what) {
  SCOPED_TRACE(what + ", rank " + std::to_string(b.rank));
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.stage, b.stage);
  EXPECT_EQ(a.end_s, b.end_s);
  EXPECT_EQ(a.compute_s, b.compute_s);
  for (std::size_t k = 0; k < graph::kNumGroupKinds; ++k) {
    EXPECT_EQ(a.exposed_comm_s[k], b.exposed_comm_s[k]) << "exposed comm kind " << k;
    EXPECT_EQ(a.comm_s[k], b.comm_s[k]) << "comm kind " << k;
  }
  EXPECT_EQ(a.idle_s, b.idle_s);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.peak_memory, b.peak_memory);
  EXPECT_EQ(a.static_memory, b.static_memory);
  EXPECT_EQ(a.oom, b.oom);
}

}  // namespace tessera::integration
