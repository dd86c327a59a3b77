// SPDX-License-Identifier: Apache-2.0
// The real traces ASTRA-sim ships (tests/chakra/testdata) read without error, and what the
// reader makes of them matches what an independent decoding of the bytes says.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "graph/chakra/chakra_reader.h"
#include "tests/chakra/raw_decoder.h"

namespace tessera::graph::chakra {
namespace {

using chakra_test::raw_decode;
using chakra_test::RawNode;
using chakra_test::RawTrace;
using chakra_test::slurp;

constexpr int kRanks = 8;
constexpr std::uint64_t kMiB = 1U << 20U;

std::string testdata(const std::string& dir, const std::string& prefix) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/chakra/testdata/" + dir + "/" + prefix;
}

RawTrace raw_rank(const std::string& prefix, int rank) {
  return raw_decode(slurp(et_path(prefix, rank)));
}

// Chakra CollectiveCommType numbers (docs/chakra_format.md) -> ours, for the types Tessera reads.
std::optional<CollType> expected_coll(std::uint64_t chakra) {
  static const std::map<std::uint64_t, CollType> kMap = {{0, CollType::kAllReduce},
                                                         {2, CollType::kAllGather},
                                                         {5, CollType::kBroadcast},
                                                         {6, CollType::kAllToAll},
                                                         {7, CollType::kReduceScatter}};
  auto it = kMap.find(chakra);
  return it == kMap.end() ? std::nullopt : std::optional(it->second);
}

struct Microbench {
  const char* dir;
  const char* prefix;
  std::uint64_t comm_type;  // as the README of the test data states
};

void PrintTo(const Microbench& m, std::ostream* os) {
  *os << m.dir;
}

class MicrobenchTrace : public ::testing::TestWithParam<Microbench> {};

TEST_P(MicrobenchTrace, OneCollectiveOfOneMiBPerRank) {
  const Microbench& m = GetParam();
  const std::string prefix = testdata(m.dir, m.prefix);
  ExecGraph g = read_chakra(prefix);
  ASSERT_EQ(g.num_ranks, kRanks);
  for (int r = 0; r < kRanks; ++r) {
    RawTrace raw = raw_rank(prefix, r);
    EXPECT_EQ(raw.version, "0.0.4");
    ASSERT_EQ(raw.nodes.size(), 1U);
    const RawNode& rn = raw.nodes[0];
    EXPECT_EQ(rn.type, 7);  // COMM_COLL_NODE
    ASSERT_NE(rn.attr("comm_type"), nullptr);
    ASSERT_NE(rn.attr("comm_size"), nullptr);
    EXPECT_EQ(rn.at("comm_type").varint, m.comm_type);
    EXPECT_EQ(rn.at("comm_size").varint, kMiB);
    EXPECT_EQ(rn.attr("pg_name"), nullptr);

    const RankGraph& rg = g.graph_of(r);
    ASSERT_EQ(rg.size(), 1U);
    const Node& n = rg.nodes[0];
    EXPECT_EQ(n.kind, NodeKind::kCollective);
    EXPECT_EQ(n.coll, expected_coll(rn.at("comm_type").varint));
    const double shards = n.coll == CollType::kAllGather ? kRanks : 1;  // ASTRA-sim's convention
    EXPECT_EQ(n.bytes, static_cast<double>(rn.at("comm_size").varint) * shards);
    EXPECT_EQ(g.groups[static_cast<std::size_t>(n.group)].ranks.size(), std::size_t{kRanks});
    EXPECT_EQ(g.names[n.name], rn.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Astrasim, MicrobenchTrace,
                         ::testing::Values(Microbench{"all_reduce-8npus-1MB", "all_reduce", 0},
                                           Microbench{"all_gather-8npus-1MB", "all_gather", 2},
                                           Microbench{"all_to_all-8npus-1MB", "all_to_all", 6},
                                           Microbench{"reduce_scatter-8npus-1MB", "reduce_scatter",
                                                      7}));

const std::string kRing = testdata("custom-ring-allreduce-8npus-1MB", "custom_allreduce");

TEST(RingTrace, NeutralFormKeepsMetadataAndNodes) {
  EtTrace t = read_et_file(et_path(kRing, 0));
  EXPECT_EQ(t.version, raw_rank(kRing, 0).version);
  EXPECT_EQ(t.version, "");  // this producer names the schema in an attribute instead
  ASSERT_EQ(t.metadata.size(), 3U);
  EXPECT_EQ(t.metadata[0].name, "schema");
  EXPECT_EQ(t.metadata[0].string_val, "1.0.2-chakra.0.0.4");
  EXPECT_EQ(t.metadata[2].string_val, "allreduce");
  EXPECT_EQ(t.nodes.size(), raw_rank(kRing, 0).nodes.size());
}

// Compares one rank node by node against the independent decoding.
void expect_ring_rank(const ExecGraph& g, int r, const RawTrace& raw) {
  const RankGraph& rg = g.graph_of(r);
  ASSERT_EQ(rg.size(), raw.nodes.size());
  std::map<std::uint64_t, NodeId> index;  // the file is in dependency order
  for (NodeId i = 0; i < rg.size(); ++i) {
    const RawNode& rn = raw.nodes[i];
    const Node& n = rg.nodes[i];
    index[rn.id] = i;
    auto [b, e] = rg.deps_of(i);
    std::vector<NodeId> want;
    for (std::uint64_t d : rn.data_deps) {
      want.push_back(index.at(d));
    }
    EXPECT_EQ(std::vector<NodeId>(b, e), want) << rn.name;
    if (rn.type == 4) {  // COMP_NODE: only a duration
      EXPECT_EQ(n.kind, NodeKind::kCompute);
      EXPECT_EQ(n.fixed_duration, static_cast<base::SimTime>(rn.duration_micros) * 1'000'000);
      continue;
    }
    const bool send = rn.type == 5;
    ASSERT_TRUE(send || rn.type == 6) << rn.name;
    EXPECT_EQ(n.kind, send ? NodeKind::kSend : NodeKind::kRecv);
    EXPECT_EQ(n.peer, static_cast<std::int32_t>(rn.at(send ? "comm_dst" : "comm_src").varint));
    EXPECT_EQ(n.tag, static_cast<std::int64_t>(rn.at("comm_tag").varint));
    EXPECT_EQ(n.bytes, static_cast<double>(rn.at("comm_size").varint));
  }
}

TEST(RingTrace, SendsReceivesAndComputeMatchTheBytes) {
  ExecGraph g = read_chakra(kRing);
  ASSERT_EQ(g.num_ranks, kRanks);
  EXPECT_TRUE(g.groups.empty());
  for (int r = 0; r < kRanks; ++r) {
    RawTrace raw = raw_rank(kRing, r);
    int sends = 0;
    for (const RawNode& rn : raw.nodes) {
      sends += rn.type == 5 ? 1 : 0;
      if (rn.type == 5) {  // a ring: every send goes to the next rank, 128 KiB at a time
        EXPECT_EQ(rn.at("comm_dst").varint, static_cast<std::uint64_t>((r + 1) % kRanks));
        EXPECT_EQ(rn.at("comm_size").varint, kMiB / kRanks);
      }
    }
    EXPECT_EQ(sends, 14);
    expect_ring_rank(g, r, raw);
  }
}

TEST(RingTrace, DurationsOptionTimesEveryComputeNodeByItsDuration) {
  ImportOptions o;
  o.use_durations = true;
  ExecGraph g = read_chakra(kRing, o);
  for (const Node& n : g.graph_of(3).nodes) {
    if (n.kind == NodeKind::kCompute) {
      EXPECT_EQ(n.fixed_duration, 7'000'000);
    }
  }
}

}  // namespace
}  // namespace tessera::graph::chakra
