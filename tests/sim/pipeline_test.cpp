// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules with uniform costs reproduce the golden orders, makespans and bubbles of
// pipeline_schedules.md (sections 2.0 to 2.3). The per-rank orders come from the real
// generator (synth::schedule::stage_order); the simulator times them, and the order in which
// each rank's compute nodes actually ran is checked against the golden strings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/base/error.h"
#include "sim/simulation.h"
#include "synth/schedule/pipeline_schedule.h"
#include "tests/sim/sim_test_util.h"

namespace tessera::sim {
namespace {

using base::SimTime;
using graph::ExecGraph;
using graph::RankGraph;
using synth::ScheduleConfig;
using synth::ScheduleKind;
using synth::schedule::stage_order;
using synth::schedule::Task;
using namespace simtest;  // NOLINT(google-build-using-namespace)

constexpr SimTime kUs = 1'000'000;  // one "time unit" of the reference (1 us)
constexpr double kUnit = 1e-6;      // the same in seconds

// Uniform costs in time units, and the per-message latency c of section 2.0.
struct Costs {
  SimTime f = 1 * kUs;
  SimTime b = 2 * kUs;
  SimTime c = 0;
};

// "F3" for flat schedules, "F3c4" (with the virtual stage) for interleaved ones.
std::string label(const Task& t, bool with_stage) {
  return synth::schedule::to_string({t}, with_stage);
}

int chunks_of(const ScheduleConfig& cfg) {
  return cfg.kind == ScheduleKind::kInterleaved ? static_cast<int>(cfg.chunks) : 1;
}

// An op of the pipeline: (forward?, microbatch, virtual stage).
using OpKey = std::tuple<bool, int, int>;

OpKey key_of(const Task& t) {
  return {t.kind == Task::kForward, t.microbatch, t.stage};
}

// Section 2.0's dependencies for S = v*p virtual stages: F(t,j) <- F(t-1,j); B(t,j) <-
// B(t+1,j), or <- F(S-1,j) at the last stage.
std::optional<OpKey> producer_of(const Task& t, int stages) {
  if (t.kind == Task::kForward) {
    return t.stage > 0 ? std::optional<OpKey>{{true, t.microbatch, t.stage - 1}} : std::nullopt;
  }
  return t.stage == stages - 1 ? OpKey{true, t.microbatch, t.stage}
                               : OpKey{false, t.microbatch, t.stage + 1};
}

// Section 2.0's list scheduler: each rank runs its list in order and an op starts when its
// rank and its producer are done (+c across ranks). Returns the end time of every op. The
// graph builder uses it only to post each rank's recvs in the order their messages arrive
// (see stage_graph); the simulator times the graphs on its own.
std::map<OpKey, SimTime> list_schedule(const std::vector<std::vector<Task>>& orders, int v,
                                       const Costs& costs) {
  const int p = static_cast<int>(orders.size());
  const int stages = v * p;
  std::map<OpKey, SimTime> end;
  std::vector<std::size_t> next(orders.size(), 0);
  std::vector<SimTime> free_at(orders.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < orders.size(); ++r) {
      while (next[r] < orders[r].size()) {
        const Task& op = orders[r][next[r]];
        SimTime start = free_at[r];
        if (auto prod = producer_of(op, stages)) {
          auto it = end.find(*prod);
          if (it == end.end()) {
            break;
          }
          const bool cross = std::get<2>(*prod) % p != static_cast<int>(r);
          start = std::max(start, it->second + (cross ? costs.c : 0));
        }
        free_at[r] = start + (op.kind == Task::kForward ? costs.f : costs.b) / v;
        end[key_of(op)] = free_at[r];
        ++next[r];
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < orders.size(); ++r) {
    EXPECT_EQ(next[r], orders[r].size()) << "the orders deadlock under section 2.0's model";
  }
  return end;
}

// Rank r's graph for S = v*p virtual stages (rank of virtual stage t is t mod p) with the
// dependencies of producer_of. An edge between ranks is a zero-byte recv on the consumer and
// a zero-byte send after the producing op, tagged by (microbatch, producing virtual stage,
// direction); an edge within the rank (p = 1) is a direct dependency. A chunk op costs F/v or
// B/v. Each F allocates one unit (byte) of activation memory that the matching B frees, so
// RankStats::peak_memory counts in-flight chunk activations.
//
// Sends are rendezvous and the pp_send / pp_recv streams run in list order, so a rank's recvs
// are posted in the order their messages arrive (`arrival`, from list_schedule; ties in op
// order), not in op order: posting recvs in op order can deadlock, e.g. interleaved p=4, v=2,
// m=12, g=6, where rank 3 would post recv F6c3 before recv B0c3 while rank 0 sends B0c4
// before rank 2 can produce F6c2.
RankGraph stage_graph(ExecGraph& g, int p, int v, int r, const std::vector<Task>& ops,
                      const std::map<OpKey, SimTime>& arrival, const Costs& costs) {
  EXPECT_EQ(costs.f % v, 0) << "F/v must be a whole number of picoseconds";
  EXPECT_EQ(costs.b % v, 0) << "B/v must be a whole number of picoseconds";
  const int stages = v * p;
  const bool with_stage = v > 1;
  auto rank_of = [p](int t) { return t % p; };
  auto tag = [stages](const OpKey& producer) {
    const auto [forward, mb, stage] = producer;
    return (static_cast<std::int64_t>(mb) * stages + stage) * 2 + (forward ? 0 : 1);
  };
  RankGraph rg;
  rg.stage = r;

  // The recvs, in arrival order.
  std::vector<std::pair<SimTime, std::size_t>> incoming;  // (arrival, index in ops)
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (auto prod = producer_of(ops[i], stages); prod && rank_of(std::get<2>(*prod)) != r) {
      auto it = arrival.find(*prod);
      incoming.emplace_back(it == arrival.end() ? base::kTimeNever : it->second, i);
    }
  }
  std::stable_sort(incoming.begin(), incoming.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::size_t, graph::NodeId> recv_of;  // index in ops -> its recv
  for (const auto& [when, i] : incoming) {
    const OpKey prod = *producer_of(ops[i], stages);
    recv_of[i] =
        rg.add(recv(g, "recv_" + label(ops[i], with_stage), rank_of(std::get<2>(prod)), tag(prod)));
  }

  std::map<OpKey, graph::NodeId> done;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Task& op = ops[i];
    const bool forward = op.kind == Task::kForward;
    const int t = op.stage;
    EXPECT_EQ(t, op.chunk * p + r) << label(op, true) << " on rank " << r;
    const std::string name = label(op, with_stage);
    std::vector<graph::NodeId> deps;
    if (auto it = recv_of.find(i); it != recv_of.end()) {
      deps.push_back(it->second);
    } else if (auto prod = producer_of(op, stages)) {
      auto same = done.find(*prod);
      if (same == done.end()) {
        ADD_FAILURE() << name << " on rank " << r << " runs before its same-rank producer";
      } else {
        deps.push_back(same->second);
      }
    }
    graph::Node c = compute(g, name, (forward ? costs.f : costs.b) / v);
    c.microbatch = op.microbatch;
    (forward ? c.mem_alloc : c.mem_free) = 1;
    const graph::NodeId n = rg.add(c, deps);
    done[key_of(op)] = n;
    const int consumer = forward ? t + 1 : t - 1;
    if (consumer >= 0 && consumer < stages && rank_of(consumer) != r) {
      rg.add(send(g, "send_" + name, rank_of(consumer), tag(key_of(op))), {n});
    }
  }
  return rg;
}

struct PipelineRun {
  ExecGraph graph;
  RunStats stats;
};

// A zero-byte send costs collective_step + path latency; the test profile's links have no
// latency, so collective_step is exactly the per-message latency c.
PipelineRun run_pipeline(const ScheduleConfig& cfg, int p, int m, const Costs& costs = {}) {
  hw::Profile prof = test_profile();
  prof.collective_step = costs.c;
  PipelineRun out;
  std::vector<std::vector<Task>> orders;
  for (int r = 0; r < p; ++r) {
    orders.push_back(stage_order(cfg, p, r, m));
  }
  const int v = chunks_of(cfg);
  const std::map<OpKey, SimTime> arrival = list_schedule(orders, v, costs);
  std::vector<RankGraph> graphs;
  for (int r = 0; r < p; ++r) {
    graphs.push_back(
        stage_graph(out.graph, p, v, r, orders[static_cast<std::size_t>(r)], arrival, costs));
  }
  set_per_rank(out.graph, graphs);
  out.stats = run(out.graph, make_cluster(prof, 8), prof, /*timeline=*/true);
  return out;
}

PipelineRun run_pipeline(ScheduleKind kind, int p, int m, const Costs& costs = {}) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  return run_pipeline(cfg, p, m, costs);
}

ScheduleConfig interleaved(int v, int group = 0) {
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kInterleaved;
  cfg.chunks = v;
  cfg.group = group;
  return cfg;
}

// The compute nodes of `rank` in the order the simulator started them.
std::string executed_order(const PipelineRun& pr, std::int32_t rank) {
  std::vector<Span> spans;
  for (const Span& s : pr.stats.spans) {
    if (s.rank == rank && s.stream == graph::Stream::kCompute) {
      spans.push_back(s);
    }
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span& a, const Span& b) { return a.start < b.start; });
  std::string text;
  for (const Span& s : spans) {
    text += (text.empty() ? "" : " ") + pr.graph.names[s.name];
  }
  return text;
}

// (m + p - 1)(F + B) in seconds.
double flush_makespan(int p, int m, const Costs& c) {
  return static_cast<double>(m + p - 1) * static_cast<double>(c.f + c.b) * kUnit /
         static_cast<double>(kUs);
}

// Section 2.0: bubble of rank r = T - busy_r, so sum_r(T - busy_r) = p*T - total work; with
// free communication nothing is exposed and the per-rank idle is exactly that bubble.
void expect_bubble_identity(const RunStats& s, int p, int m, const Costs& c) {
  const double t = s.step_time_s;
  const double work = static_cast<double>(p) * static_cast<double>(m) *
                      static_cast<double>(c.f + c.b) * kUnit / static_cast<double>(kUs);
  double bubbles = 0.0;
  double idle = 0.0;
  for (const RankStats& r : s.ranks) {
    bubbles += t - r.compute_s;
    idle += r.idle_s;
  }
  EXPECT_NEAR(bubbles, static_cast<double>(p) * t - work, 1e-15);
  if (c.c == 0) {
    EXPECT_NEAR(idle, bubbles, 1e-15);
  }
}

const std::vector<std::string>& golden_1f1b_p4_m8() {
  static const std::vector<std::string> golden = {
      "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
      "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
      "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
      "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"};
  return golden;
}

TEST(Pipeline, OneFOneBGeneratorMatchesGoldenOrdersForP4M8) {
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(synth::schedule::to_string(stage_order(ScheduleKind::k1F1B, 4, r, 8)),
              golden_1f1b_p4_m8()[static_cast<std::size_t>(r)])
        << "rank " << r;
  }
}

TEST(Pipeline, OneFOneBP4M8ExecutesGoldenOrderWithGoldenMakespan) {
  const Costs costs;
  PipelineRun pr = run_pipeline(ScheduleKind::k1F1B, 4, 8, costs);
  const RunStats& s = pr.stats;
  EXPECT_DOUBLE_EQ(s.step_time_s, 33e-6);
  EXPECT_DOUBLE_EQ(s.step_time_s, flush_makespan(4, 8, costs));
  ASSERT_EQ(s.ranks.size(), 4U);
  for (const RankStats& r : s.ranks) {
    EXPECT_DOUBLE_EQ(r.compute_s, 24e-6) << "rank " << r.rank;
    EXPECT_NEAR(r.idle_s, 9e-6, 1e-15) << "rank " << r.rank;
    EXPECT_EQ(r.stage, r.rank);
    EXPECT_EQ(executed_order(pr, r.rank), golden_1f1b_p4_m8()[static_cast<std::size_t>(r.rank)])
        << "rank " << r.rank;
  }
  expect_bubble_identity(s, 4, 8, costs);
}

TEST(Pipeline, GPipeP4M8) {
  const Costs costs;
  PipelineRun pr = run_pipeline(ScheduleKind::kGpipe, 4, 8, costs);
  const RunStats& s = pr.stats;
  EXPECT_DOUBLE_EQ(s.step_time_s, 33e-6);
  const std::string golden = "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7";
  for (const RankStats& r : s.ranks) {
    EXPECT_NEAR(r.idle_s, 9e-6, 1e-15) << "rank " << r.rank;
    EXPECT_EQ(synth::schedule::to_string(stage_order(ScheduleKind::kGpipe, 4, r.rank, 8)), golden);
    EXPECT_EQ(executed_order(pr, r.rank), golden) << "rank " << r.rank;
  }
  expect_bubble_identity(s, 4, 8, costs);
}

TEST(Pipeline, OneFOneBWithFewerMicrobatchesThanStages) {
  const Costs costs;
  const RunStats s = run_pipeline(ScheduleKind::k1F1B, 4, 2, costs).stats;
  EXPECT_DOUBLE_EQ(s.step_time_s, 15e-6);
  expect_bubble_identity(s, 4, 2, costs);
}

TEST(Pipeline, OneFOneBMakespanForOtherCosts) {
  for (const auto& [f, b, expected] : {std::tuple{1, 1, 22e-6}, std::tuple{2, 3, 55e-6}}) {
    Costs costs;
    costs.f = f * kUs;
    costs.b = b * kUs;
    for (ScheduleKind kind : {ScheduleKind::k1F1B, ScheduleKind::kGpipe}) {
      const RunStats s = run_pipeline(kind, 4, 8, costs).stats;
      EXPECT_DOUBLE_EQ(s.step_time_s, expected) << "F=" << f << " B=" << b;
      EXPECT_DOUBLE_EQ(s.step_time_s, flush_makespan(4, 8, costs));
      expect_bubble_identity(s, 4, 8, costs);
    }
  }
}

TEST(Pipeline, GPipeWithLatencyFollowsClosedForm) {
  // Section 2.1: T = (m+p-1)(F+B) + 2(p-1)c, e.g. 33.6 / 36 / 39 for c = 0.1 / 0.5 / 1.
  for (const auto& [c, expected] :
       {std::pair{kUs / 10, 33.6e-6}, std::pair{kUs / 2, 36e-6}, std::pair{kUs, 39e-6}}) {
    Costs costs;
    costs.c = c;
    PipelineRun pr = run_pipeline(ScheduleKind::kGpipe, 4, 8, costs);
    const double closed = flush_makespan(4, 8, costs) +
                          2.0 * 3.0 * static_cast<double>(c) * kUnit / static_cast<double>(kUs);
    EXPECT_NEAR(pr.stats.step_time_s, expected, 1e-15) << "c = " << c;
    EXPECT_NEAR(pr.stats.step_time_s, closed, 1e-15) << "c = " << c;
    for (const RankStats& r : pr.stats.ranks) {
      EXPECT_DOUBLE_EQ(r.compute_s, 24e-6) << "rank " << r.rank;
      EXPECT_EQ(executed_order(pr, r.rank), "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7")
          << "rank " << r.rank;
    }
    expect_bubble_identity(pr.stats, 4, 8, costs);
  }
}

// --- Section 2.3: interleaved 1F1B (virtual stages) --------------------------------------

double units(double x) {
  return x * kUnit;
}

// Section 2.0 bubbles for interleaved runs, plus the same idle on every rank (2.0's remark).
void expect_equal_idle(const RunStats& s) {
  ASSERT_FALSE(s.ranks.empty());
  for (const RankStats& r : s.ranks) {
    EXPECT_NEAR(r.idle_s, s.ranks.front().idle_s, 1e-15) << "rank " << r.rank;
  }
}

TEST(Pipeline, InterleavedMakespansMatchReference) {
  struct Case {
    int p, m, v, group;
    double expected;  // time units
  };
  for (const Case& k : {Case{4, 8, 2, 0, 28.5}, Case{4, 8, 4, 0, 26.25}, Case{4, 4, 2, 0, 16.5},
                        Case{4, 12, 2, 0, 40.5}, Case{4, 12, 2, 6, 40.5}, Case{8, 16, 2, 0, 58.5},
                        Case{2, 6, 2, 0, 19.5}}) {
    const Costs costs;
    const RunStats s = run_pipeline(interleaved(k.v, k.group), k.p, k.m, costs).stats;
    const std::string what = "p=" + std::to_string(k.p) + " m=" + std::to_string(k.m) +
                             " v=" + std::to_string(k.v) + " g=" + std::to_string(k.group);
    EXPECT_NEAR(s.step_time_s, units(k.expected), 1e-15) << what;
    // T = (m + (p-1)/v)(F+B).
    EXPECT_NEAR(s.step_time_s, units((k.m + (k.p - 1.0) / k.v) * 3.0), 1e-15) << what;
    ASSERT_EQ(s.ranks.size(), static_cast<std::size_t>(k.p)) << what;
    for (const RankStats& r : s.ranks) {
      EXPECT_NEAR(r.compute_s, units(3.0 * k.m), 1e-15) << what << " rank " << r.rank;
      EXPECT_EQ(r.stage, r.rank) << what;
    }
    expect_bubble_identity(s, k.p, k.m, costs);
    expect_equal_idle(s);
  }
}

TEST(Pipeline, InterleavedSingleRankUsesSameRankEdges) {
  // p = 1: every edge between virtual stages stays on the rank; no bubble at all.
  const Costs costs;
  for (int v : {2, 4}) {
    const RunStats s = run_pipeline(interleaved(v, 1), 1, 4, costs).stats;
    EXPECT_NEAR(s.step_time_s, units(12.0), 1e-15) << "v=" << v;
    expect_bubble_identity(s, 1, 4, costs);
  }
}

const std::vector<std::string>& golden_interleaved_p4_v2_m8() {
  static const std::vector<std::string> golden = {
      "F0c0 F1c0 F2c0 F3c0 F0c4 F1c4 F2c4 F3c4 F4c0 F5c0 F6c0 B0c4 F7c0 B1c4 F4c4 B2c4 F5c4 "
      "B3c4 F6c4 B0c0 F7c4 B1c0 B2c0 B3c0 B4c4 B5c4 B6c4 B7c4 B4c0 B5c0 B6c0 B7c0",
      "F0c3 F1c3 F2c3 F3c3 F0c7 B0c7 F1c7 B1c7 F2c7 B2c7 F3c7 B3c7 F4c3 B0c3 F5c3 B1c3 F6c3 "
      "B2c3 F7c3 B3c3 F4c7 B4c7 F5c7 B5c7 F6c7 B6c7 F7c7 B7c7 B4c3 B5c3 B6c3 B7c3"};
  return golden;
}

TEST(Pipeline, InterleavedGeneratorAndExecutionMatchGoldenOrdersForP4V2M8) {
  const ScheduleConfig cfg = interleaved(2);
  PipelineRun pr = run_pipeline(cfg, 4, 8);
  for (const auto& [rank, golden] : {std::pair{0, golden_interleaved_p4_v2_m8()[0]},
                                     std::pair{3, golden_interleaved_p4_v2_m8()[1]}}) {
    EXPECT_EQ(synth::schedule::to_string(stage_order(cfg, 4, rank, 8), true), golden)
        << "rank " << rank;
    EXPECT_EQ(executed_order(pr, rank), golden) << "rank " << rank;
  }
  // Every rank runs exactly its generated order.
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(executed_order(pr, r), synth::schedule::to_string(stage_order(cfg, 4, r, 8), true))
        << "rank " << r;
  }
}

std::vector<double> peaks(const RunStats& s) {
  std::vector<double> out;
  for (const RankStats& r : s.ranks) {
    out.push_back(r.peak_memory);
  }
  return out;
}

TEST(Pipeline, PeakInFlightActivationsInChunkUnits) {
  EXPECT_EQ(peaks(run_pipeline(interleaved(2), 4, 8).stats), (std::vector<double>{11, 9, 7, 5}));
  EXPECT_EQ(peaks(run_pipeline(interleaved(4), 4, 8).stats), (std::vector<double>{19, 17, 15, 13}));
  EXPECT_EQ(peaks(run_pipeline(ScheduleKind::k1F1B, 4, 8).stats),
            (std::vector<double>{4, 3, 2, 1}));
  EXPECT_EQ(peaks(run_pipeline(ScheduleKind::kGpipe, 4, 8).stats),
            (std::vector<double>{8, 8, 8, 8}));
}

TEST(Pipeline, InterleavedRejectsLastGroupSmallerThanPp) {
  // p=4, v=2, m=5: m mod p = 1 leaves dependency bubbles (Megatron raises).
  const ScheduleConfig cfg = interleaved(2);
  try {
    synth::schedule::check_schedule(cfg, 4, 5);
    ADD_FAILURE() << "check_schedule accepted p=4, v=2, m=5";
  } catch (const base::InputError& e) {
    EXPECT_NE(e.message().find("dependency bubbles"), std::string::npos) << e.message();
  }
  EXPECT_THROW(stage_order(cfg, 4, 0, 5), base::InputError);
  EXPECT_NO_THROW(synth::schedule::check_schedule(cfg, 4, 8));
}

}  // namespace
}  // namespace tessera::sim
