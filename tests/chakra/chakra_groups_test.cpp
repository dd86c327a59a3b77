// SPDX-License-Identifier: Apache-2.0
// Communicator groups: the JSON beside the traces, inference without it, bad JSON, and the
// writer's relabelling hooks for ranks that share a class graph.
#include <gtest/gtest.h>

#include <algorithm>
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

using chakra_test::TempDir;
using chakra_test::write_bytes;

ExecGraph tiny_graph() {
  synth::Scenario s = synth::testing::gpt_scenario(2, 256, 4, 2, 2, 2);
  s.training.seq_len = 128;
  s.training.micro_batch = 2;
  s.training.global_batch = 8;
  return synth::synthesize(s, {.share_rank_classes = false});
}

std::vector<std::int32_t> members_of(const ExecGraph& g, const Node& n) {
  std::vector<std::int32_t> r = g.groups[static_cast<std::size_t>(n.group)].ranks;
  std::sort(r.begin(), r.end());
  return r;
}

void expect_same_groups(const ExecGraph& a, const ExecGraph& b) {
  for (std::int32_t r = 0; r < a.num_ranks; ++r) {
    const auto& na = a.graph_of(r).nodes;
    const auto& nb = b.graph_of(r).nodes;
    ASSERT_EQ(na.size(), nb.size());
    for (std::size_t i = 0; i < na.size(); ++i) {
      if (na[i].kind == NodeKind::kCollective) {
        EXPECT_EQ(members_of(a, na[i]), members_of(b, nb[i])) << "rank " << r << " node " << i;
      }
    }
  }
}

TEST(CommGroups, JsonListsEveryGroupSorted) {
  const ExecGraph g = tiny_graph();
  TempDir dir;
  write_chakra(g, dir.path() + "/t");
  const CommGroups json = read_comm_groups(comm_groups_path(dir.path() + "/t"), g.num_ranks);
  ASSERT_EQ(json.size(), g.groups.size());
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    std::vector<std::int32_t> want = g.groups[i].ranks;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(json.at(std::to_string(i + 1)), want);
  }
}

TEST(CommGroups, InferredFromTheTracesWithoutJson) {
  const ExecGraph g = tiny_graph();
  TempDir dir;
  write_chakra(g, dir.path() + "/t");
  std::filesystem::remove(comm_groups_path(dir.path() + "/t"));
  expect_same_groups(g, read_chakra(dir.path() + "/t"));
}

TEST(CommGroups, BadJsonNamesTheFile) {
  const ExecGraph g = tiny_graph();
  TempDir dir;
  const std::string prefix = dir.path() + "/t";
  write_chakra(g, prefix);
  const std::string path = comm_groups_path(prefix);
  for (const char* text : {"{ \"1\": [0, 1", "[1, 2]", "{\"1\": [0, 99]}", "{\"1\": [2, 2]}"}) {
    write_bytes(path, text);
    try {
      read_chakra(prefix);
      ADD_FAILURE() << "accepted " << text;
    } catch (const base::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(CommGroups, JsonMustListTheRanksThatUseAGroup) {
  const ExecGraph g = tiny_graph();
  TempDir dir;
  const std::string prefix = dir.path() + "/t";
  write_chakra(g, prefix);
  std::string all = "{";
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    all += (i == 0 ? "\"" : ", \"") + std::to_string(i + 1) + "\": [7]";
  }
  write_bytes(comm_groups_path(prefix), all + "}");
  try {
    read_chakra(prefix);
    ADD_FAILURE() << "accepted a group without its users";
  } catch (const base::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(et_path(prefix, 0)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not list rank 0"), std::string::npos) << e.what();
  }
}

TEST(WriteRank, AppliesTheRelabellingHooks) {
  const ExecGraph g = tiny_graph();
  TempDir dir;
  ExportOptions o;
  o.group_of = [](std::int32_t grp) { return grp == 0 ? 1 : grp; };
  o.peer_of = [](std::int32_t peer) { return 7 - peer; };
  write_rank(g, g.graph_of(0), 0, dir.path() + "/t", o);
  const auto raw = chakra_test::raw_decode(chakra_test::slurp(et_path(dir.path() + "/t", 0)));
  const RankGraph& rg = g.graph_of(0);
  for (std::size_t i = 0; i < rg.size(); ++i) {
    const Node& n = rg.nodes[i];
    if (n.kind == NodeKind::kSend) {
      EXPECT_EQ(raw.nodes[i].at("comm_dst").varint, static_cast<std::uint64_t>(7 - n.peer));
    } else if (n.kind == NodeKind::kCollective) {
      EXPECT_EQ(raw.nodes[i].at("pg_name").text, std::to_string(o.group_of(n.group) + 1));
    }
  }
}

}  // namespace
}  // namespace tessera::graph::chakra
