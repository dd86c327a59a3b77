// SPDX-License-Identifier: Apache-2.0
// Graphs that cannot finish stop with a SimulationError that says who waits for what.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/error.h"
#include "sim/simulation.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::sim {
namespace {

using graph::CollType;
using graph::ExecGraph;
using graph::GroupKind;
using graph::RankGraph;
using namespace simtest;  // NOLINT(google-build-using-namespace)

std::string error_of(const ExecGraph& g) {
  hw::Profile p = test_profile();
  auto start = std::chrono::steady_clock::now();
  try {
    run(g, make_cluster(p, 8), p);
  } catch (const base::SimulationError& e) {
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    return e.what();
  }
  ADD_FAILURE() << "no SimulationError";
  return "";
}

TEST(Deadlock, CollectivesInOppositeOrderNameTheNodeAndTheMissingRank) {
  ExecGraph g;
  g.groups.push_back({GroupKind::kTP, {0, 1}});
  g.groups.push_back({GroupKind::kTP, {0, 1}});
  std::vector<RankGraph> graphs(2);
  graphs[0].add(compute(g, "warmup", 1000));
  graphs[0].add(collective(g, "ar_first", 0, CollType::kAllReduce, 1e3));
  graphs[0].add(collective(g, "ar_second", 1, CollType::kAllReduce, 1e3));
  graphs[1].add(collective(g, "ar_second", 1, CollType::kAllReduce, 1e3));
  graphs[1].add(collective(g, "ar_first", 0, CollType::kAllReduce, 1e3));
  set_per_rank(g, graphs);
  std::string msg = error_of(g);
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0: 1 of 3 nodes finished"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tp_comm head 'ar_first' (collective all_reduce, microbatch -1) waits for "
                     "ranks 1 to reach it"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("tp_comm head 'ar_second' (collective all_reduce, microbatch -1) waits for "
                     "ranks 0 to reach it"),
            std::string::npos)
      << msg;
}

TEST(Deadlock, RecvWithoutSendAndItsDependents) {
  ExecGraph g;
  std::vector<RankGraph> graphs(2);
  auto r = graphs[0].add(recv(g, "recv_act", 1, 42));
  graph::Node f = compute(g, "fwd", 1000);
  f.microbatch = 3;
  graphs[0].add(f, {r});
  graphs[1].add(compute(g, "other", 1000));
  set_per_rank(g, graphs);
  std::string msg = error_of(g);
  EXPECT_NE(
      msg.find("pp_recv_activation head 'recv_act' (recv, microbatch -1) waits for a matching send "
               "from rank 1 (tag 42)"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("compute head 'fwd' (compute elementwise, microbatch 3) waits for "
                     "unfinished dependencies 'recv_act'"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("rank 1:"), std::string::npos) << msg;  // rank 1 finished
}

}  // namespace
}  // namespace tessera::sim
