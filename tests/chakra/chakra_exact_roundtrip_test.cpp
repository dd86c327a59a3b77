// SPDX-License-Identifier: Apache-2.0
// synth -> write Chakra -> read -> simulate gives exactly what simulating the synthesized
// graph directly gives: the tessera.* attributes carry everything the models read (op
// classes, GEMM dims, dtypes, exact FLOPs/bytes, fixed durations, memory, streams, group
// kinds and rings, the step's FLOPs). Compared bit for bit: step time and every ranks.csv
// column, for scenarios/tiny.yaml and a multi-node PP x DP x TP (SP) variant of it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/chakra_writer.h"
#include "hwprofiles/hw_profile.h"
#include "sim/simulation.h"
#include "synth/build/synthesize.h"
#include "tests/chakra/chakra_test_util.h"
#include "topology/cluster.h"

namespace tessera::graph::chakra {
namespace {

std::string tiny_path() {
  return std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml";
}

// What `tessera run` does: shared rank classes, the scenario's precision.
sim::RunStats simulate_direct(const synth::Scenario& s) {
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  const ExecGraph g = synth::synthesize(s);
  sim::SimOptions opt;
  opt.dtype = s.training.precision;
  return sim::simulate(g, cluster, profile, opt);
}

// Written with every rank's own graph, read back, simulated as `simulate --chakra` does.
sim::RunStats simulate_round_trip(const synth::Scenario& s, const std::string& prefix,
                                  ImportInfo& info) {
  const ExecGraph written = synth::synthesize(s, {.share_rank_classes = false});
  ExportOptions eo;
  eo.precision = s.training.precision;
  write_chakra(written, prefix, eo);
  const ExecGraph g = read_chakra(prefix, {}, &info);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, g.num_ranks);
  sim::SimOptions opt;
  opt.share_rank_classes = false;
  opt.eager_sends = !info.tessera;
  opt.dtype = info.precision;
  return sim::simulate(g, cluster, profile, opt);
}

void expect_identical(const sim::RunStats& a, const sim::RunStats& b) {
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.peak_flops, b.peak_flops);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const sim::RankStats& x = a.ranks[r];
    const sim::RankStats& y = b.ranks[r];
    EXPECT_EQ(x.stage, y.stage) << "rank " << r;
    EXPECT_EQ(x.end_s, y.end_s) << "rank " << r;
    EXPECT_EQ(x.compute_s, y.compute_s) << "rank " << r;
    EXPECT_EQ(x.exposed_comm_s, y.exposed_comm_s) << "rank " << r;
    EXPECT_EQ(x.comm_s, y.comm_s) << "rank " << r;
    EXPECT_EQ(x.idle_s, y.idle_s) << "rank " << r;
    EXPECT_EQ(x.flops, y.flops) << "rank " << r;
    EXPECT_EQ(x.compute_by_class_s, y.compute_by_class_s) << "rank " << r;
    EXPECT_EQ(x.peak_memory, y.peak_memory) << "rank " << r;
    EXPECT_EQ(x.static_memory, y.static_memory) << "rank " << r;
    EXPECT_EQ(x.oom, y.oom) << "rank " << r;
    EXPECT_EQ(x.sent_bytes, y.sent_bytes) << "rank " << r;
    EXPECT_EQ(x.peak_breakdown.weights, y.peak_breakdown.weights) << "rank " << r;
    EXPECT_EQ(x.peak_breakdown.gradients, y.peak_breakdown.gradients) << "rank " << r;
    EXPECT_EQ(x.peak_breakdown.comm_buffers, y.peak_breakdown.comm_buffers) << "rank " << r;
    EXPECT_EQ(x.peak_breakdown.activations, y.peak_breakdown.activations) << "rank " << r;
    EXPECT_EQ(x.tp_index, y.tp_index) << "rank " << r;
    EXPECT_EQ(x.dp_index, y.dp_index) << "rank " << r;
  }
}

TEST(ExactRoundTrip, TinyMatchesDirectSimulation) {
  const synth::Scenario s = synth::load_scenario(tiny_path());
  chakra_test::TempDir dir;
  ImportInfo info;
  const sim::RunStats back = simulate_round_trip(s, dir.path() + "/tiny", info);
  EXPECT_TRUE(info.tessera);
  EXPECT_EQ(info.precision, s.training.precision);
  const sim::RunStats direct = simulate_direct(s);
  EXPECT_GT(direct.step_time_s, 0.0);
  expect_identical(direct, back);
}

// 32 H100 in 4 DGX nodes on the SuperPOD fabric: TP2 (SP) x PP4 x DP4, 1F1B and interleaved.
TEST(ExactRoundTrip, MultiNodePipelineAndDataParallelMatchDirectSimulation) {
  const std::vector<std::string> base = {
      "model.layers=8",      "cluster.topology=dgx-h100-superpod",
      "cluster.devices=32",  "parallelism.tp=2",
      "parallelism.pp=4",    "parallelism.dp=4",
      "parallelism.sp=true", "training.global_batch=64"};
  for (const char* schedule : {"1f1b", "interleaved"}) {
    std::vector<std::string> sets = base;
    if (std::string(schedule) == "interleaved") {
      sets.emplace_back("schedule.kind=interleaved");
      sets.emplace_back("schedule.chunks=2");
    }
    const synth::Scenario s = synth::load_scenario(tiny_path(), sets);
    chakra_test::TempDir dir;
    ImportInfo info;
    SCOPED_TRACE(schedule);
    expect_identical(simulate_direct(s), simulate_round_trip(s, dir.path() + "/pp", info));
  }
}

// The attention shape and mask (tessera.node dims, tessera.causal) and CUDA-graph launches
// (tessera.cuda_graphs) travel too: without them, attention would run at the non-causal
// rate and every kernel would wait for the eager host.
TEST(ExactRoundTrip, AttentionShapeAndCudaGraphsSurvive) {
  const synth::Scenario s =
      synth::load_scenario(tiny_path(), {"training.cuda_graphs=true", "training.seq_len=1024"});
  chakra_test::TempDir dir;
  ImportInfo info;
  expect_identical(simulate_direct(s), simulate_round_trip(s, dir.path() + "/graphs", info));
}

// Without tensor parallelism the layers' TP collectives have a group of one: synth writes each as
// a compute node of no time on its collective's stream, and the reader takes it back. Sliding-
// window attention's shorter kernels (the window in the attention dims) travel too.
TEST(ExactRoundTrip, GroupsOfOneAndSlidingWindowsSurvive) {
  const synth::Scenario s = synth::load_scenario(
      tiny_path(), {"parallelism.tp=1", "parallelism.dp=4", "training.seq_len=1024",
                    "model.sliding_window=128", "model.full_attention_every=2"});
  chakra_test::TempDir dir;
  ImportInfo info;
  expect_identical(simulate_direct(s), simulate_round_trip(s, dir.path() + "/tp1", info));
}

// MXFP8's block-scaled GEMMs (tessera.fp8_block_scaled) travel too: without the flag they would
// run at the per-tensor FP8 rate, not b200's gemm.mxfp8_rate of it.
TEST(ExactRoundTrip, MxFp8BlockScalesSurvive) {
  const synth::Scenario s = synth::load_scenario(
      tiny_path(),
      {"cluster.hardware=b200", "training.precision=fp8", "training.fp8_recipe=mxfp8"});
  ASSERT_LT(hw::load_profile("b200").gemm.mxfp8_rate, 1.0);
  chakra_test::TempDir dir;
  ImportInfo info;
  expect_identical(simulate_direct(s), simulate_round_trip(s, dir.path() + "/mx", info));
}

// A malformed tessera.node is an input error naming the node, never a silent misreading.
TEST(ExactRoundTrip, MalformedTesseraNodeIsAnInputError) {
  using ChakraProtoMsg::COMP_NODE;
  const std::vector<std::vector<std::int64_t>> bad = {
      {0, 0, 1, 1, 0},            // too short
      {9, 0, 1, 1, 0, 0, 0, 0},   // no such stream
      {1, 0, 1, 1, 0, 0, 0, 0},   // compute on the tp stream
      {0, 0, 1, 1, 0, 0, 42, 0},  // no such op class
  };
  for (const auto& values : bad) {
    ChakraProtoMsg::Node n = chakra_test::et_node(0, COMP_NODE);
    chakra_test::et_attr(n, "num_ops").set_int64_val(10);
    chakra_test::et_attr(n, "tensor_size").set_int64_val(10);
    auto* list = chakra_test::et_attr(n, "tessera.node").mutable_int64_list();
    for (std::int64_t v : values) {
      list->add_values(v);
    }
    chakra_test::TempDir dir;
    chakra_test::write_bytes(dir.path() + "/t.0.et", chakra_test::et_bytes({n}));
    try {
      read_chakra(dir.path() + "/t");
      ADD_FAILURE() << "accepted tessera.node of " << values.size() << " entries";
    } catch (const base::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("node 0"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera::graph::chakra
