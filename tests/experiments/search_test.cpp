// SPDX-License-Identifier: Apache-2.0
// tessera search (experiments/search/): the memory bound never above the simulated peak on a
// dense, an MoE and an FSDP space; the pruned search ranking what the exhaustive one does;
// results that do not depend on the thread count; and bad input with its exact messages.
#include "experiments/search/search.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "experiments/search/files.h"
#include "experiments/search/point.h"
#include "tests/temp_dir.h"

namespace tessera::experiments::search {
namespace {

const std::string kScenarios = std::string(TESSERA_SOURCE_DIR) + "/scenarios/";

// A small dense space: tiny's decoder made 8 layers deep, every default axis on 8 devices.
Request dense_space() {
  Request r;
  r.scenario = kScenarios + "tiny.yaml";
  r.sets = {"model.layers=8", "training.global_batch=16"};
  return r;
}

// Qwen3-30B-A3B cut to 4 layers and 1024-token sequences on 16 devices, over EP and schedules.
Request moe_space() {
  Request r;
  r.scenario = kScenarios + "qwen3-30b-a3b-h100.yaml";
  r.sets = {"model.layers=4", "training.seq_len=1024", "training.global_batch=32"};
  r.vary = {"tp=1,2",
            "pp=1,2",
            "ep=1,4,8",
            "zero=1,3",
            "recompute=none,full",
            "schedule=1f1b,interleaved:2,dualpipev"};
  return r;
}

// Llama-3-8B under FSDP cut to 4 layers on one node, over ZeRO stages, TP, micro-batches and
// recompute (TorchTitan's op-level selective checkpointing too).
Request fsdp_space() {
  Request r;
  r.scenario = kScenarios + "llama3-8b-fsdp-h100.yaml";
  r.sets = {"model.layers=4", "training.seq_len=2048"};
  r.vary = {"tp=1,2", "pp=1,2", "zero=0,1,2,3", "micro_batch=1,2",
            "recompute=none,full,selective_op"};
  return r;
}

std::size_t simulated(const Result& res) {
  std::size_t n = 0;
  for (const PointResult& p : res.points) {
    n += p.simulated() ? 1 : 0;
  }
  return n;
}

void expect_bound_below_peak(Request req, const std::string& what) {
  req.prune = false;
  const Result res = run_search(req);
  ASSERT_GT(simulated(res), 10U) << what;
  for (const PointResult& p : res.points) {
    if (p.simulated()) {
      EXPECT_GT(p.memory_bound, 0.0) << what << " point " << p.index;
      EXPECT_LE(p.memory_bound, p.run.peak_hbm) << what << " point " << p.index;
    }
  }
}

TEST(Search, MemoryBoundIsNeverAboveTheSimulatedPeak) {
  expect_bound_below_peak(dense_space(), "dense");
  expect_bound_below_peak(moe_space(), "moe");
  expect_bound_below_peak(fsdp_space(), "fsdp");
}

// The memory limit at the median simulated peak: about half the points do not fit.
TEST(Search, PrunedSearchRanksWhatTheExhaustiveOneDoes) {
  for (Request req : {dense_space(), fsdp_space()}) {
    req.prune = false;
    const Result all = run_search(req);
    std::vector<double> peaks;
    for (const PointResult& p : all.points) {
      if (p.status == Status::kRan) {
        peaks.push_back(p.run.peak_hbm);
      }
    }
    std::sort(peaks.begin(), peaks.end());
    req.max_memory = peaks[peaks.size() / 2] / all.usable_hbm;
    const Result exhaustive = run_search(req);
    req.prune = true;
    const Result pruned = run_search(req);
    std::size_t n_pruned = 0;
    for (const PointResult& p : pruned.points) {
      n_pruned += p.status == Status::kPruned ? 1 : 0;
    }
    EXPECT_GT(n_pruned, 0U) << req.scenario;
    EXPECT_EQ(pruned.ranked, exhaustive.ranked) << req.scenario;
    EXPECT_EQ(pruned.pareto, exhaustive.pareto) << req.scenario;
  }
}

// A folder of this test process's own (a fixed /tmp path would be shared by two test runs at
// once, say a CI run beside a developer's), removed at exit.
std::string scratch() {
  static const testing::TempDir kDir;
  return kDir.path();
}

std::string csv_of(const Result& res) {
  const std::string path = scratch() + "/search_threads.csv";
  write_search_csv(path, res);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Search, ResultsDoNotDependOnTheThreadCount) {
  Request req = moe_space();
  req.max_memory = 0.5;
  std::string first;
  for (int jobs : {1, 2, 4}) {
    req.jobs = jobs;
    const std::string csv = csv_of(run_search(req));
    if (first.empty()) {
      first = csv;
    }
    EXPECT_EQ(csv, first) << jobs << " threads";
  }
  EXPECT_NE(first.find(",ran,"), std::string::npos);
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = scratch() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Two shards merged, and a search interrupted half-way (its journal cut mid-line) then
// restarted, write the search.csv of one uninterrupted search.
TEST(Search, ShardedAndResumedSearchesWriteTheSameFile) {
  Request req = dense_space();
  req.max_memory = 0.5;
  const std::string whole = csv_of(run_search(req));
  std::vector<std::string> dirs;
  for (int i : {1, 0}) {
    Request shard = req;
    shard.shard = {i, 2};
    shard.out = fresh_dir(fmt::format("search_shard{}", i));
    const Result part = run_search(shard);
    EXPECT_LT(part.points.size(), run_search(req).points.size());
    dirs.push_back(shard.out);
  }
  EXPECT_EQ(csv_of(merge_searches(dirs, req.objective)), whole);

  req.out = fresh_dir("search_resumed");
  run_search(req);
  const std::string journal = req.out + "/points.jsonl";
  const std::string full = file_text(journal);
  std::ofstream(journal, std::ios::trunc) << full.substr(0, full.size() / 2);  // cut mid-line
  EXPECT_EQ(csv_of(run_search(req)), whole);
  EXPECT_EQ(file_text(journal).size(), full.size());  // every point once, none repeated
}

TEST(Search, MergeNeedsEveryShardOfOneSearch) {
  Request req = dense_space();
  req.shard = {0, 2};
  req.out = fresh_dir("search_merge0");
  run_search(req);
  auto merge_error = [](const std::vector<std::string>& dirs) {
    try {
      merge_searches(dirs, Objective::kStepTime);
    } catch (const base::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(merge_error({req.out}), "error: --merge: shard 1/2 is missing");
  Request other = req;
  other.shard = {1, 2};
  other.max_memory = 0.5;
  other.out = fresh_dir("search_merge1");
  run_search(other);
  EXPECT_NE(merge_error({req.out, other.out}).find("this shard is of a different search"),
            std::string::npos);
  EXPECT_THROW(parse_shard("3/2"), base::InputError);
  EXPECT_THROW(parse_shard("1/0"), base::InputError);
  EXPECT_EQ(parse_shard("1/2"), (Shard{1, 2}));
}

std::string message_of(const Request& req) {
  try {
    run_search(req);
  } catch (const base::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Search, BadInputSaysWhatIsWrong) {
  Request r = dense_space();
  r.vary = {"tpp=2"};
  EXPECT_EQ(
      message_of(r),
      "error: --vary tpp=2: 'tpp' is not a search axis (did you mean 'tp'?); the axes are tp, pp, "
      "cp, cp_comm, ep, etp, zero, micro_batch, recompute, sp, schedule, order");
  r.vary = {"tp=2,abc"};
  EXPECT_EQ(message_of(r), "error: --vary tp: value 'abc': expected an integer >= 1");
  r.vary = {"zero=4"};
  EXPECT_EQ(message_of(r), "error: --vary zero: value '4': expected an integer 0..3");
  r.vary = {"schedule=1f1b,zigzag"};
  EXPECT_NE(message_of(r).find("--vary schedule: value 'zigzag': "), std::string::npos);
  r.vary = {"tp="};
  EXPECT_EQ(message_of(r), "error: --vary tp=: no values; expected axis=v1,v2,... (e.g. tp=2,4,8)");
  r.vary = {"tp=2", "tp=4"};
  EXPECT_EQ(message_of(r), "error: --vary: axis 'tp' is given twice");
  r.vary = {};
  r.devices = 12;
  EXPECT_EQ(message_of(r),
            "--devices 12: error: devices=12 is not a multiple of the 8 devices per node of "
            "'h100-sxm'; a cluster of more than one node is made of whole nodes");
}

TEST(Search, ASpaceWithoutAValidPointIsBadInput) {
  Request r = dense_space();
  r.vary = {"tp=3"};  // divides neither the heads nor the devices
  const std::string m = message_of(r);
  EXPECT_NE(m.find("the search space of"), std::string::npos) << m;
  EXPECT_NE(m.find("has no valid configuration on 8 devices"), std::string::npos) << m;
  const std::string file = scratch() + "/empty_space.yaml";
  std::ofstream(file) << "{}\n";
  r.vary = {};
  r.space_file = file;
  EXPECT_NE(message_of(r).find("a search space is a mapping of axes to their values, and this "
                               "one names none"),
            std::string::npos)
      << message_of(r);
}

// The defaults that follow the frameworks: TP of an MoE model up to 4, and a ZeRO-3 point of a
// pipeline keeping its units gathered (TorchTitan's reshard_after_forward policy) unless the
// scenario sets the key.
TEST(Search, DefaultsFollowTheFrameworks) {
  const synth::Scenario moe = synth::load_scenario(kScenarios + "deepseek-v3-h100.yaml", {});
  const Space moe_space = make_space(moe, 2048, {}, "--vary");
  EXPECT_EQ(moe_space.axis("tp").values, (std::vector<std::string>{"1", "2", "4"}));
  const synth::Scenario dense = synth::load_scenario(kScenarios + "llama3-70b-h100.yaml", {});
  EXPECT_EQ(make_space(dense, 512, {}, "--vary").axis("tp").values,
            (std::vector<std::string>{"1", "2", "4", "8"}));

  auto reshard = [](const synth::Scenario& base, const std::string& pp, const std::string& zero) {
    const Space space = make_space(
        base, base.cluster.devices,
        {parse_vary("tp=8"), parse_vary("pp=" + pp), parse_vary("zero=" + zero)}, "--vary");
    PointResult r;
    const std::optional<synth::Scenario> s = make_point(base, space, 0, r);
    EXPECT_TRUE(s.has_value()) << r.detail;
    return s ? s->training.reshard_after_forward : std::nullopt;
  };
  EXPECT_EQ(reshard(dense, "2", "3"), std::optional<bool>(false));
  EXPECT_EQ(reshard(dense, "1", "3"), std::nullopt);
  EXPECT_EQ(reshard(dense, "2", "1"), std::nullopt);
  synth::Scenario own = dense;
  own.parallel.zero = 3;
  own.training.reshard_after_forward = true;
  EXPECT_EQ(reshard(own, "2", "3"), std::optional<bool>(true));
  EXPECT_EQ(reshard(own, "2", "1"), std::nullopt);  // no effect without ZeRO-3
}

}  // namespace
}  // namespace tessera::experiments::search
