// SPDX-License-Identifier: Apache-2.0
// timeline.json.gz: gzip that reads back as a Chrome trace with categories and a memory
// counter, collectives labelled with the tuner's algorithm and protocol, the same bytes for the
// same run; rank lists as typed on the command line.
#include "sim/report/timeline.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "sim/report/rank_list.h"
#include "tests/sim/sim_test_util.h"
#include "tests/temp_dir.h"

namespace tessera::sim::report {
namespace {

using namespace simtest;  // NOLINT(google-build-using-namespace)

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[4096];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<std::size_t>(n));
  }
  gzclose(f);
  return out;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Two ranks: a GEMM that allocates, then a TP all-reduce.
graph::ExecGraph two_ranks() {
  graph::ExecGraph g;
  g.groups.push_back({graph::GroupKind::kTP, {0, 1}});
  std::vector<graph::RankGraph> graphs(2);
  for (auto& r : graphs) {
    graph::Node a = compute(g, "gemm", 1000);
    a.op = graph::OpClass::kGemm;
    a.mem_alloc = 1 << 20;
    graph::NodeId id = r.add(a);
    graph::Node c = collective(g, "ar", 0, graph::CollType::kAllReduce, 1e6);
    c.mem_free = 1 << 20;
    r.add(c, {id});
  }
  set_per_rank(g, graphs);
  return g;
}

TEST(Timeline, GzipChromeTraceWithCategoriesAndMemory) {
  hw::Profile p = test_profile();
  graph::ExecGraph g = two_ranks();
  RunStats s = run(g, make_cluster(p, 8), p);
  testing::TempDir dir;
  std::string path = dir.path() + "/timeline.json.gz";
  TimelineWritten w = write_timeline(path, g, s);
  std::string text = gunzip(path);
  EXPECT_EQ(w.json_bytes, text.size());
  EXPECT_EQ(w.file_bytes, bytes_of(path).size());
  nlohmann::json j = nlohmann::json::parse(text);
  int gemm = 0;
  int comm = 0;
  int counters = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      gemm += e["cat"] == "gemm" ? 1 : 0;
      comm += e["cat"] == "tp_comm" ? 1 : 0;
      // A collective names the algorithm and protocol the tuner chose (two members: the
      // one-shot or ring LL exchange); a GEMM names none.
      EXPECT_EQ(e["args"].contains("algorithm"), e["cat"] == "tp_comm");
      if (e["cat"] == "tp_comm") {
        EXPECT_FALSE(e["args"]["algorithm"].get<std::string>().empty());
        EXPECT_FALSE(e["args"]["protocol"].get<std::string>().empty());
      }
    }
    counters += e["ph"] == "C" ? 1 : 0;
  }
  EXPECT_EQ(gemm, 2);
  EXPECT_EQ(comm, 2);
  EXPECT_GE(counters, 4);  // per rank: static at 0, the GEMM's allocation, the free
  std::string again = dir.path() + "/again.json.gz";
  write_timeline(again, g, run(g, make_cluster(p, 8), p));
  EXPECT_EQ(bytes_of(path), bytes_of(again));
}

TEST(Timeline, NoteSaysWhatIsLeftOut) {
  hw::Profile p = test_profile();
  graph::ExecGraph g = two_ranks();
  SimOptions o;
  o.record_timeline = true;
  o.timeline_ranks = {1};
  RunStats s = simulate(g, make_cluster(p, 8), p, o);
  EXPECT_EQ(timeline_note(g, s),
            "timeline shows ranks 1 (1 of 2); 1 rank left out (--timeline-ranks 0,8,16-31 picks "
            "others)");
}

TEST(RankList, ParsesAndFormats) {
  EXPECT_EQ(parse_rank_list("0,8,16-19"), (std::vector<std::int32_t>{0, 8, 16, 17, 18, 19}));
  EXPECT_EQ(parse_rank_list("3,1,3"), (std::vector<std::int32_t>{1, 3}));
  EXPECT_TRUE(parse_rank_list_or_empty("").empty());
  EXPECT_THROW(parse_rank_list("1,,2"), base::InputError);
  EXPECT_THROW(parse_rank_list("x"), base::InputError);
  EXPECT_THROW(parse_rank_list("5-2"), base::InputError);
  EXPECT_EQ(format_rank_list({0, 1, 2, 5, 7, 8}), "0-2,5,7,8");
}

}  // namespace
}  // namespace tessera::sim::report
