// SPDX-License-Identifier: Apache-2.0
// Synthesized graphs written as Chakra traces read back identical (kinds, FLOPs, bytes,
// collective types, sizes and groups, peers, tags, dependencies), and the bytes on disk say
// what docs/chakra_format.md asks for, checked with the independent decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/chakra_writer.h"
#include "graph/chakra/comm_groups.h"
#include "synth/build/synthesize.h"
#include "tests/chakra/chakra_test_util.h"
#include "tests/chakra/raw_decoder.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::graph::chakra {
namespace {

using chakra_test::raw_decode;
using chakra_test::RawNode;
using chakra_test::slurp;
using chakra_test::TempDir;

synth::Scenario tiny(std::int64_t tp, std::int64_t pp, std::int64_t dp, bool sp) {
  synth::Scenario s = synth::testing::gpt_scenario(2, 256, 4, tp, pp, dp);
  s.training.seq_len = 128;
  s.training.micro_batch = 2;
  s.training.global_batch = 8;
  s.training.attention = synth::AttentionKernel::kFlash;
  s.parallel.sp = sp;
  return s;
}

std::vector<std::int32_t> sorted_members(const ExecGraph& g, std::int32_t group) {
  std::vector<std::int32_t> r = g.groups[static_cast<std::size_t>(group)].ranks;
  std::sort(r.begin(), r.end());
  return r;
}

void expect_same_node(const ExecGraph& ga, const Node& a, const ExecGraph& gb, const Node& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(ga.names[a.name], gb.names[b.name]);
  EXPECT_EQ(std::llround(a.flops), std::llround(b.flops));
  EXPECT_EQ(std::llround(a.bytes), std::llround(b.bytes)) << ga.names[a.name];
  if (a.kind == NodeKind::kCollective) {
    EXPECT_EQ(a.coll, b.coll);
    EXPECT_EQ(a.comm_sms, b.comm_sms);
    EXPECT_EQ(sorted_members(ga, a.group), sorted_members(gb, b.group));
  } else if (a.kind != NodeKind::kCompute) {
    EXPECT_EQ(a.peer, b.peer);
    EXPECT_EQ(a.tag, b.tag);
  }
}

void expect_same_rank(const ExecGraph& ga, const RankGraph& a, const ExecGraph& gb,
                      const RankGraph& b) {
  ASSERT_EQ(a.size(), b.size());
  for (NodeId i = 0; i < a.size(); ++i) {
    expect_same_node(ga, a.nodes[i], gb, b.nodes[i]);
    auto [ab, ae] = a.deps_of(i);
    auto [bb, be] = b.deps_of(i);
    EXPECT_EQ(std::vector<NodeId>(ab, ae), std::vector<NodeId>(bb, be)) << "node " << i;
  }
}

struct Case {
  const char* name;
  synth::Scenario scenario;
};

// gtest prints a parameter with this instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class RoundTrip : public ::testing::TestWithParam<Case> {};

// How many nodes of all ranks satisfy `pred`: the scenarios must exercise every node kind.
template <typename Pred>
std::size_t count(const ExecGraph& g, Pred pred) {
  std::size_t c = 0;
  for (const RankGraph& rg : g.classes) {
    c += static_cast<std::size_t>(std::count_if(rg.nodes.begin(), rg.nodes.end(), pred));
  }
  return c;
}

TEST_P(RoundTrip, ReadBackEqualsWhatWasWritten) {
  const ExecGraph g = synth::synthesize(GetParam().scenario, {.share_rank_classes = false});
  ASSERT_GT(count(g, [](const Node& n) { return n.kind == NodeKind::kCompute; }), 100U);
  ASSERT_GT(count(g, [](const Node& n) { return n.kind == NodeKind::kCollective; }), 10U);
  const bool pp = GetParam().scenario.parallel.pp > 1;
  EXPECT_EQ(count(g, [](const Node& n) { return n.kind == NodeKind::kSend; }) > 0, pp);
  const bool sp = GetParam().scenario.parallel.sp;
  EXPECT_EQ(count(g, [](const Node& n) { return n.coll == CollType::kAllGather; }) > 0, sp);
  TempDir dir;
  for (bool ctrl : {true, false}) {
    const std::string prefix = dir.path() + (ctrl ? "/ctrl" : "/plain");
    ExportOptions o;
    o.stream_order_ctrl_deps = ctrl;
    write_chakra(g, prefix, o);
    const ExecGraph back = read_chakra(prefix);
    ASSERT_EQ(back.num_ranks, g.num_ranks);
    for (std::int32_t r = 0; r < g.num_ranks; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r) + (ctrl ? " with ctrl deps" : ""));
      expect_same_rank(g, g.graph_of(r), back, back.graph_of(r));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, RoundTrip,
                         ::testing::Values(Case{"tp2_pp2_dp2", tiny(2, 2, 2, false)},
                                           Case{"tp2_dp4_sp", tiny(2, 1, 4, true)}),
                         [](const auto& p) { return std::string(p.param.name); });

// The attribute contract, read from the bytes without the reader.
void expect_contract(const ExecGraph& g, std::int32_t rank, const RawNode& rn, const Node& n) {
  using namespace chakra_test;  // NOLINT: field numbers
  ASSERT_NE(rn.attr("is_cpu_op"), nullptr);
  EXPECT_EQ(rn.at("is_cpu_op").value_field, kBoolVal);
  EXPECT_EQ(rn.at("is_cpu_op").varint, 0U);
  EXPECT_EQ(rn.name, g.names[n.name]);
  if (n.kind == NodeKind::kCompute) {
    EXPECT_EQ(rn.type, 4);
    EXPECT_EQ(rn.at("num_ops").value_field, kInt64Val);
    // At least 1 each: ASTRA-sim's roofline cannot time 0 (chakra_writer.h).
    EXPECT_EQ(rn.at("num_ops").varint,
              static_cast<std::uint64_t>(std::max(std::llround(n.flops), 1LL)));
    EXPECT_EQ(rn.at("tensor_size").value_field, kUint64Val);
    EXPECT_EQ(rn.at("tensor_size").varint,
              static_cast<std::uint64_t>(std::max(std::llround(n.bytes), 1LL)));
  } else if (n.kind == NodeKind::kCollective) {
    const auto members = g.groups[static_cast<std::size_t>(n.group)].ranks.size();
    const double shard =
        n.coll == CollType::kAllGather ? n.bytes / static_cast<double>(members) : n.bytes;
    EXPECT_EQ(rn.type, 7);
    EXPECT_EQ(rn.at("comm_type").value_field, kInt64Val);
    EXPECT_EQ(rn.at("comm_size").value_field, kInt64Val);
    EXPECT_EQ(rn.at("comm_size").varint, static_cast<std::uint64_t>(std::llround(shard)));
    EXPECT_EQ(rn.at("pg_name").value_field, kStringVal);
    EXPECT_EQ(rn.at("pg_name").text, std::to_string(n.group + 1));
  } else {
    const bool send = n.kind == NodeKind::kSend;
    EXPECT_EQ(rn.type, send ? 5 : 6);
    EXPECT_EQ(rn.at("comm_src").value_field, kInt32Val);
    EXPECT_EQ(rn.at("comm_src").varint, static_cast<std::uint64_t>(send ? rank : n.peer));
    EXPECT_EQ(rn.at("comm_dst").varint, static_cast<std::uint64_t>(send ? n.peer : rank));
    EXPECT_EQ(rn.at("comm_tag").varint, static_cast<std::uint64_t>(n.tag));
  }
}

TEST(WrittenBytes, FollowTheFormatDocument) {
  const ExecGraph g = synth::synthesize(tiny(2, 2, 2, true), {.share_rank_classes = false});
  TempDir dir;
  const std::string prefix = dir.path() + "/t";
  ExportOptions o;
  o.stream_order_ctrl_deps = false;
  write_chakra(g, prefix, o);
  const std::int32_t rank = 5;
  const auto raw = raw_decode(slurp(et_path(prefix, rank)));
  EXPECT_EQ(raw.version, kEtVersion);
  const RankGraph& rg = g.graph_of(rank);
  ASSERT_EQ(raw.nodes.size(), rg.size());
  for (NodeId i = 0; i < rg.size(); ++i) {
    EXPECT_EQ(raw.nodes[i].id, i);
    auto [b, e] = rg.deps_of(i);
    EXPECT_EQ(raw.nodes[i].data_deps, std::vector<std::uint64_t>(b, e));
    EXPECT_TRUE(raw.nodes[i].ctrl_deps.empty());
    expect_contract(g, rank, raw.nodes[i], rg.nodes[i]);
  }
  EXPECT_TRUE(std::filesystem::exists(comm_groups_path(prefix)));
}

TEST(WrittenBytes, CtrlDepsChainEachInOrderStream) {
  const ExecGraph g = synth::synthesize(tiny(2, 2, 2, false), {.share_rank_classes = false});
  TempDir dir;
  const std::string prefix = dir.path() + "/t";
  write_rank(g, g.graph_of(0), 0, prefix);
  const auto raw = raw_decode(slurp(et_path(prefix, 0)));
  const RankGraph& rg = g.graph_of(0);
  std::vector<std::int64_t> last(kNumStreams, -1);
  for (NodeId i = 0; i < rg.size(); ++i) {
    const Node& n = rg.nodes[i];
    const bool in_order =
        n.stream == Stream::kCompute || n.stream == Stream::kTP || n.stream == Stream::kDP;
    std::int64_t& prev = last[static_cast<std::size_t>(n.stream)];
    const auto& data = raw.nodes[i].data_deps;
    const bool implied = prev < 0 || std::find(data.begin(), data.end(),
                                               static_cast<std::uint64_t>(prev)) != data.end();
    std::vector<std::uint64_t> want;
    if (in_order && !implied) {
      want.push_back(static_cast<std::uint64_t>(prev));
    }
    EXPECT_EQ(raw.nodes[i].ctrl_deps, want) << "node " << i;
    prev = in_order ? static_cast<std::int64_t>(i) : prev;
  }
}

TEST(WriteChakra, RefusesSharedRankClasses) {
  const ExecGraph g = synth::synthesize(tiny(2, 2, 2, false));
  TempDir dir;
  EXPECT_THROW(write_chakra(g, dir.path() + "/t"), base::InternalError);
}

// Chakra has no collective for a shift round a ring (cp_comm: p2p): exporting one is refused
// as bad input, naming what can be exported instead.
TEST(WriteChakra, RefusesARingExchangeNamingWhatCanBeExported) {
  synth::Scenario s = tiny(1, 1, 1, false);
  s.training.seq_len = 256;
  s.parallel.cp = 2;
  s.parallel.cp_comm = synth::CpComm::kP2P;
  s.cluster.devices = 2;
  synth::check_or_throw(s);
  const ExecGraph g = synth::synthesize(s, {.share_rank_classes = false});
  TempDir dir;
  try {
    write_chakra(g, dir.path() + "/t");
    FAIL() << "exported a ring exchange";
  } catch (const base::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("export the scenario with cp_comm: allgather or a2a"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::graph::chakra
