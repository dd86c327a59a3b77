// SPDX-License-Identifier: Apache-2.0
// The report's derived fields against closed forms on small scenarios: the causal MFU, the
// configuration fields, bytes sent per group kind, the peak-memory breakdown.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/report/config_fields.h"
#include "sim/report/report.h"
#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

struct Outcome {
  graph::ExecGraph graph;
  sim::RunStats stats;
  sim::report::Metrics metrics;
};

Outcome run(const synth::Scenario& s) {
  Outcome r;
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  r.graph = synth::synthesize(s, {});
  r.stats = sim::simulate(r.graph, cluster, profile, {});
  r.metrics = sim::report::compute_metrics(r.graph, r.stats, s.cluster.devices);
  return r;
}

std::string printed(const Outcome& r) {
  std::ostringstream out;
  sim::report::print_summary(out, {}, r.graph, r.stats, r.metrics);
  return out.str();
}

// Causal attention (QK^T and PV, 4 b s^2 h per layer forward, 3x with backward) is the part
// of the model FLOPs that the causal figure counts half.
TEST(ReportFields, CausalMfuHalvesAttentionFlops) {
  synth::Scenario s = tiny_like();
  Outcome r = run(s);
  const double b = 8.0;
  const double seq = 128.0;
  const double h = 256.0;
  const double layers = 2.0;
  const double attention = 3.0 * 4.0 * b * seq * seq * h * layers;
  EXPECT_DOUBLE_EQ(r.graph.info.causal_attention_flops, attention);
  const double capacity = r.stats.step_time_s * 8.0 * r.stats.peak_flops;
  EXPECT_DOUBLE_EQ(r.metrics.mfu, r.graph.info.model_flops / capacity);
  EXPECT_NEAR(r.metrics.mfu_causal, (r.graph.info.model_flops - attention / 2.0) / capacity, 1e-15);
  EXPECT_LT(r.metrics.mfu_causal, r.metrics.mfu);
  EXPECT_NE(printed(r).find("MFU causal"), std::string::npos);
  EXPECT_NE(printed(r).find("without causal halving"), std::string::npos);
}

TEST(ReportFields, BidirectionalAttentionHasOneMfu) {
  synth::Scenario s = tiny_like();
  s.model.causal = false;
  Outcome r = run(s);
  EXPECT_EQ(r.graph.info.causal_attention_flops, 0.0);
  EXPECT_DOUBLE_EQ(r.metrics.mfu_causal, r.metrics.mfu);
  EXPECT_EQ(printed(r).find("MFU causal"), std::string::npos);
}

// Flash attention keeps no s^2 activations, so selective recompute has nothing to drop: the
// run says so, and its memory and step time are those of no recompute.
TEST(ReportFields, SelectiveRecomputeWithFlashAttentionSaysItChangesNothing) {
  synth::Scenario none = tiny_like();
  synth::Scenario selective = none;
  selective.training.recompute = synth::Recompute::kSelective;
  Outcome a = run(none);
  Outcome b = run(selective);
  EXPECT_TRUE(a.graph.info.notes.empty());
  ASSERT_EQ(b.graph.info.notes.size(), 1U);
  EXPECT_NE(printed(b).find("note: selective recompute changes nothing"), std::string::npos);
  EXPECT_EQ(a.metrics.peak_hbm, b.metrics.peak_hbm);
  EXPECT_EQ(a.stats.step_time_s, b.stats.step_time_s);
  selective.training.attention = synth::AttentionKernel::kUnfused;
  EXPECT_TRUE(run(selective).graph.info.notes.empty());
}

// The configuration travels as fields, not only as the "TP2 PP2 DP2" label.
TEST(ReportFields, ConfigurationAsFields) {
  synth::Scenario s = tiny_like();
  s.parallel.sp = true;
  s.training.recompute = synth::Recompute::kFull;
  Outcome r = run(s);
  sim::report::RunLabel label;
  label.schedule = "1f1b";
  label.devices = 8;
  label.hardware = "h100-sxm";
  label.topology = "single-node";
  nlohmann::json j = sim::report::summary_json(label, r.graph, r.stats, r.metrics);
  EXPECT_EQ(j["tp"], 2);
  EXPECT_EQ(j["pp"], 2);
  EXPECT_EQ(j["dp"], 2);
  EXPECT_EQ(j["sp"], true);
  EXPECT_EQ(j["micro_batch"], 2);
  EXPECT_EQ(j["global_batch"], 8);
  EXPECT_EQ(j["seq_len"], 128);
  EXPECT_EQ(j["recompute"], "full");
  EXPECT_EQ(j["attention"], "flash");
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["devices"], 8);
  EXPECT_EQ(j["hardware"], "h100-sxm");
  EXPECT_EQ(j["topology"], "single-node");
  std::vector<sim::report::ConfigField> f = sim::report::config_fields(label, r.graph.info.config);
  ASSERT_EQ(f.size(), 13U);
  EXPECT_EQ(f[0].name, "tp");
  EXPECT_EQ(sim::report::csv_cell(f[3].value), "1");  // sp
  EXPECT_EQ(sim::report::csv_cell(f[7].value), "full");
  // Positions in the TP and DP groups: tiny's mesh is TP innermost, then DP.
  for (const sim::RankStats& k : r.stats.ranks) {
    EXPECT_EQ(k.tp_index, k.rank % 2) << k.rank;
    EXPECT_EQ(k.dp_index, (k.rank / 2) % 2) << k.rank;
  }
}

// DP8 without tensor or pipeline parallelism: each rank all-reduces the fp32 gradients of
// every parameter once, 2 (n-1)/n x 4 bytes x parameters in a ring, and sends nothing else.
TEST(ReportFields, DataParallelBytesSentMatchTheRingClosedForm) {
  synth::Scenario s = tiny_like(1, 1, 8);
  s.training.global_batch = 16;
  Outcome r = run(s);
  const double params = s.model.parameters();
  const double expected = 2.0 * 7.0 / 8.0 * 4.0 * params;
  for (const sim::RankStats& k : r.stats.ranks) {
    EXPECT_DOUBLE_EQ(k.sent_bytes[static_cast<std::size_t>(graph::GroupKind::kDP)], expected);
    EXPECT_EQ(k.sent_bytes[static_cast<std::size_t>(graph::GroupKind::kTP)], 0.0);
    EXPECT_EQ(k.sent_bytes[static_cast<std::size_t>(graph::GroupKind::kPP)], 0.0);
  }
  EXPECT_DOUBLE_EQ(r.metrics.comm_bytes[static_cast<std::size_t>(graph::GroupKind::kDP)], expected);
}

// On every integration case and rank the five parts of the peak sum to it exactly, none is
// negative, and static memory splits as 2 + 4 + the rest bytes per parameter (FP8 training
// adds its FP8 weight copies to the weights).
TEST(ReportFields, PeakBreakdownSumsToThePeak) {
  for (const Case& c : cases()) {
    Outcome r = run(c.scenario);
    for (const sim::RankStats& k : r.stats.ranks) {
      const sim::MemoryBreakdown& b = k.peak_breakdown;
      EXPECT_EQ(b.weights + b.gradients + b.optimizer + b.activations + b.comm_buffers,
                k.peak_memory)
          << c.name << " rank " << k.rank;
      EXPECT_GE(b.activations, 0.0) << c.name << " rank " << k.rank;
      EXPECT_GE(b.comm_buffers, 0.0) << c.name << " rank " << k.rank;
      EXPECT_GE(b.optimizer, 0.0) << c.name << " rank " << k.rank;
      if (c.scenario.training.fp8 == synth::Fp8Recipe::kNone) {
        EXPECT_EQ(b.gradients, 2.0 * b.weights) << c.name << " rank " << k.rank;
      } else {
        EXPECT_GT(2.0 * b.weights, b.gradients) << c.name << " rank " << k.rank;
      }
    }
  }
}

// training.cuda_graphs reaches the compute model through the graph: tiny's kernels are
// host-bound when launched eagerly (shorter than the host thread's launch.host each), so
// replaying them from CUDA graphs (only the launch.graph floor) shortens the step, with the
// same FLOPs.
TEST(ReportFields, CudaGraphsShortenAHostBoundStep) {
  synth::Scenario s = tiny_like();
  Outcome eager = run(s);
  s.training.cuda_graphs = true;
  Outcome graphs = run(s);
  EXPECT_FALSE(eager.graph.info.cuda_graphs);
  EXPECT_TRUE(graphs.graph.info.cuda_graphs);
  EXPECT_DOUBLE_EQ(graphs.graph.info.model_flops, eager.graph.info.model_flops);
  EXPECT_LT(graphs.stats.step_time_s, 0.95 * eager.stats.step_time_s);
}

}  // namespace
}  // namespace tessera::integration
