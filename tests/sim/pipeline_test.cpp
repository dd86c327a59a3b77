// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules with uniform costs reproduce the golden orders, makespans, bubbles and
// memory peaks of docs/pipeline_schedules.md (sections 2.0 to 2.5, 2.7 and 2.8). The per-rank
// orders come from the real generator (synth::schedule::stage_order); the simulator times them, and
// the order in which each rank's compute nodes actually ran is checked against the golden
// strings.
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

#include "base/error.h"
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
using synth::schedule::Placement;
using synth::schedule::stage_order;
using synth::schedule::Task;
using namespace simtest;  // NOLINT(google-build-using-namespace)

constexpr SimTime kUs = 1'000'000;  // one "time unit" of the reference (1 us)
constexpr double kUnit = 1e-6;      // the same in seconds

// Uniform costs in time units, and the per-message latency c of section 2.0. A split
// backward runs "b" (input gradient, cost b) and "w" (weight gradient, cost w); the fused
// backward "B" costs b + w. The flat and interleaved tests keep w = 0, so there B costs b.
struct Costs {
  SimTime f = 1 * kUs;
  SimTime b = 2 * kUs;
  SimTime w = 0;
  SimTime c = 0;
};

Costs costs_of(double f, double b, double w) {
  Costs out;
  out.f = static_cast<SimTime>(f * static_cast<double>(kUs));
  out.b = static_cast<SimTime>(b * static_cast<double>(kUs));
  out.w = static_cast<SimTime>(w * static_cast<double>(kUs));
  return out;
}

// How the simulated graphs run DualPipe's overlapped "F&B" pairs, both without overlap gain
// (the pair costs F + B): as one compute node that starts when both halves' inputs are there
// and delivers both outputs at its end (section 4.1: "one task with two output parts"), or as
// two consecutive compute nodes, the forward first.
enum class Pairs { kOneTask, kBackToBack };

// The schedule's placement and the costs: everything that turns orders into graphs.
struct Model {
  Placement place;
  int p = 1;
  int v = 1;  // the chunk costs are F/v, B/v, W/v (interleaved); 1 for flat and V shapes
  bool with_stage = false;
  char stage_letter = 'c';
  Pairs pairs = Pairs::kOneTask;
  Costs costs;

  Model(const ScheduleConfig& cfg, int ranks, const Costs& c, Pairs how)
      : place(cfg, ranks),
        p(ranks),
        v(cfg.kind == ScheduleKind::kInterleaved ? static_cast<int>(cfg.chunks) : 1),
        with_stage(place.chunks() > 1),
        stage_letter(cfg.kind == ScheduleKind::kDualPipeV || cfg.kind == ScheduleKind::kDualPipe
                         ? 's'
                         : 'c'),
        pairs(how),
        costs(c) {}

  [[nodiscard]] int stages() const { return place.stages(); }

  [[nodiscard]] SimTime cost(const Task& t) const {
    switch (t.kind) {
      case Task::kForward:
        return costs.f / v;
      case Task::kBackward:
        return (costs.b + costs.w) / v;
      case Task::kBackwardInput:
        return costs.b / v;
      case Task::kWeight:
        return costs.w / v;
    }
    return 0;
  }

  // "F3" for flat schedules, "F3c4" for interleaved ones and "F3s4" for DualPipeV; a pair run
  // as one task is "[F7s0&B3s7]", as to_string prints it.
  [[nodiscard]] std::string label(std::vector<Task> tasks) const {
    if (tasks.size() == 1) {
      tasks.front().paired = false;
    }
    return synth::schedule::to_string(tasks, with_stage, stage_letter);
  }
};

// What an op produces: the activation (F), the input gradient (B or b) or the weight
// gradient (w), with its microbatch and virtual stage.
enum Product : int { kAct, kGrad, kWgrad };
using OpKey = std::tuple<int, int, int>;  // (product, microbatch, virtual stage)

OpKey key_of(const Task& t) {
  const Product what = t.kind == Task::kForward ? kAct : t.kind == Task::kWeight ? kWgrad : kGrad;
  return {what, t.microbatch, t.stage};
}

// Section 2.0's dependencies within each pipe of the placement (DualPipe has two, every other
// schedule one): F(t,j) <- F(prev,j); B(t,j) and b(t,j) <- B or b of (next,j), or <- F(t,j)
// at the pipe's last stage; w(t,j) <- b(t,j). Microbatches are numbered per pipe and stages
// are distinct, so (product, microbatch, stage) names one op.
std::optional<OpKey> producer_of(const Task& t, const Placement& place) {
  switch (t.kind) {
    case Task::kForward:
      return place.first_of_pipe(t.stage)
                 ? std::nullopt
                 : std::optional<OpKey>{{kAct, t.microbatch, place.prev_stage(t.stage)}};
    case Task::kBackward:
    case Task::kBackwardInput:
      return place.last_of_pipe(t.stage) ? OpKey{kAct, t.microbatch, t.stage}
                                         : OpKey{kGrad, t.microbatch, place.next_stage(t.stage)};
    case Task::kWeight:
      return OpKey{kGrad, t.microbatch, t.stage};
  }
  return std::nullopt;
}

// The stage an op's output goes to, if any: F feeds the next stage of its pipe, B and b the
// previous one, w feeds nobody.
std::optional<int> consumer_of(const Task& t, const Placement& place) {
  const int next = t.kind == Task::kForward ? place.next_stage(t.stage) : place.prev_stage(t.stage);
  if (t.kind == Task::kWeight || next < 0) {
    return std::nullopt;
  }
  return next;
}

// A rank's order cut into steps, each run as one compute node: a single task, or with
// Pairs::kOneTask an "F&B" pair (the paired task and the next one).
std::vector<std::vector<std::size_t>> steps_of(const std::vector<Task>& ops, Pairs pairs) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (pairs == Pairs::kOneTask && ops[i].paired && i + 1 < ops.size()) {
      out.push_back({i, i + 1});
      ++i;
    } else {
      out.push_back({i});
    }
  }
  return out;
}

// When and where each op's output appears: its end time under section 2.0's list scheduler,
// and the (rank, index in that rank's order) of the op that produced it.
struct Produced {
  SimTime end = 0;
  int rank = 0;
  std::size_t index = 0;
};

// Section 2.0's list scheduler: each rank runs its steps in order and a step starts when its
// rank and the producers of all its tasks are done (+c across ranks). The graph builder uses
// it only to post each rank's recvs in the order their messages arrive (see stage_graph); the
// simulator times the graphs on its own.
std::map<OpKey, Produced> list_schedule(const std::vector<std::vector<Task>>& orders,
                                        const Model& model) {
  std::map<OpKey, Produced> done;
  std::vector<std::vector<std::vector<std::size_t>>> steps;
  for (const auto& ops : orders) {
    steps.push_back(steps_of(ops, model.pairs));
  }
  std::vector<std::size_t> next(orders.size(), 0);
  std::vector<SimTime> free_at(orders.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < orders.size(); ++r) {
      const int rank = static_cast<int>(r);
      while (next[r] < steps[r].size()) {
        SimTime start = free_at[r];
        SimTime duration = 0;
        bool ready = true;
        for (std::size_t i : steps[r][next[r]]) {
          const Task& op = orders[r][i];
          duration += model.cost(op);
          if (auto prod = producer_of(op, model.place)) {
            auto it = done.find(*prod);
            if (it == done.end()) {
              ready = false;
              break;
            }
            const bool cross = model.place.rank_of(std::get<2>(*prod)) != rank;
            start = std::max(start, it->second.end + (cross ? model.costs.c : 0));
          }
        }
        if (!ready) {
          break;
        }
        free_at[r] = start + duration;
        for (std::size_t i : steps[r][next[r]]) {
          done[key_of(orders[r][i])] = {free_at[r], rank, i};
        }
        ++next[r];
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < orders.size(); ++r) {
    EXPECT_EQ(next[r], steps[r].size()) << "the orders deadlock under section 2.0's model";
  }
  return done;
}

// Rank r's graph with the dependencies of producer_of, each step one compute node costing
// the sum of its tasks. An edge between ranks (Placement::rank_of) is a zero-byte recv on the
// consumer and a zero-byte send after the producing step, tagged by (microbatch, producing
// virtual stage, direction); an edge within the rank (p = 1, the tip of a V) is a direct
// dependency. Each F allocates one unit (byte) of activation memory that the matching fused B
// or w frees, so RankStats::peak_memory counts in-flight (F -> W) chunk activations.
//
// Sends are rendezvous and the pp_send / pp_recv streams run in list order, so a rank's recvs
// are posted in the order their messages arrive (from list_schedule), not in op order: posting
// recvs in op order can deadlock, e.g. interleaved p=4, v=2, m=12, g=6, where rank 3 would
// post recv F6c3 before recv B0c3 while rank 0 sends B0c4 before rank 2 can produce F6c2. Ties
// go in the order the senders send (by producing rank, then by op), so both sides agree even
// when one F&B pair sends both its outputs to the same peer at once (DualPipeV's F0&B1 feeds
// rank r+1 twice); the cases below also pass with ties in this rank's op order.
RankGraph stage_graph(ExecGraph& g, const Model& model, int r, const std::vector<Task>& ops,
                      const std::map<OpKey, Produced>& produced) {
  EXPECT_EQ(model.costs.f % model.v, 0) << "F/v must be a whole number of picoseconds";
  EXPECT_EQ(model.costs.b % model.v, 0) << "B/v must be a whole number of picoseconds";
  EXPECT_EQ(model.costs.w % model.v, 0) << "W/v must be a whole number of picoseconds";
  const int stages = model.stages();
  auto tag = [stages](const OpKey& producer) {
    const auto [what, mb, stage] = producer;
    return (static_cast<std::int64_t>(mb) * stages + stage) * 2 + (what == kAct ? 0 : 1);
  };
  RankGraph rg;
  rg.stage = r;

  // The recvs, in arrival order.
  using Arrival = std::tuple<SimTime, int, std::size_t>;  // (end, producing rank, its index)
  std::vector<std::pair<Arrival, std::size_t>> incoming;  // (arrival, index in ops)
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto prod = producer_of(ops[i], model.place);
    if (prod && model.place.rank_of(std::get<2>(*prod)) != r) {
      auto it = produced.find(*prod);
      incoming.emplace_back(it == produced.end()
                                ? Arrival{base::kTimeNever, 0, 0}
                                : Arrival{it->second.end, it->second.rank, it->second.index},
                            i);
    }
  }
  std::stable_sort(incoming.begin(), incoming.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::size_t, graph::NodeId> recv_of;  // index in ops -> its recv
  for (const auto& [when, i] : incoming) {
    const OpKey prod = *producer_of(ops[i], model.place);
    recv_of[i] = rg.add(recv(g, "recv_" + model.label({ops[i]}),
                             model.place.rank_of(std::get<2>(prod)), tag(prod)));
  }

  std::map<OpKey, graph::NodeId> done;
  for (const std::vector<std::size_t>& step : steps_of(ops, model.pairs)) {
    std::vector<Task> tasks;
    std::vector<graph::NodeId> deps;
    SimTime duration = 0;
    std::int64_t alloc = 0;
    std::int64_t release = 0;
    for (std::size_t i : step) {
      const Task& op = ops[i];
      tasks.push_back(op);
      EXPECT_EQ(model.place.stage_of(r, op.chunk), op.stage) << model.label({op}) << " rank " << r;
      EXPECT_EQ(model.place.rank_of(op.stage), r) << model.label({op}) << " rank " << r;
      if (auto it = recv_of.find(i); it != recv_of.end()) {
        deps.push_back(it->second);
      } else if (auto prod = producer_of(op, model.place)) {
        auto same = done.find(*prod);
        if (same == done.end()) {
          ADD_FAILURE() << model.label({op}) << " on rank " << r
                        << " runs before (or with) its same-rank producer";
        } else {
          deps.push_back(same->second);
        }
      }
      duration += model.cost(op);
      alloc += op.kind == Task::kForward ? 1 : 0;
      release += op.kind == Task::kBackward || op.kind == Task::kWeight ? 1 : 0;
    }
    const std::string name = model.label(tasks);
    graph::Node c = compute(g, name, duration);
    c.microbatch = tasks.front().microbatch;
    c.mem_alloc = alloc;
    c.mem_free = release;
    const graph::NodeId n = rg.add(c, deps);
    for (const Task& op : tasks) {
      done[key_of(op)] = n;
      if (auto consumer = consumer_of(op, model.place);
          consumer && model.place.rank_of(*consumer) != r) {
        rg.add(
            send(g, "send_" + model.label({op}), model.place.rank_of(*consumer), tag(key_of(op))),
            {n});
      }
    }
  }
  return rg;
}

struct PipelineRun {
  ExecGraph graph;
  RunStats stats;
  std::vector<std::vector<Task>> orders;  // the generator's, per rank
  double work_s = 0.0;                    // total compute of all ranks, from the orders
};

// A zero-byte send costs collective_step + path latency; the test profile's links have no
// latency, so collective_step is exactly the per-message latency c.
PipelineRun run_pipeline(const ScheduleConfig& cfg, int p, int m, const Costs& costs = {},
                         Pairs pairs = Pairs::kOneTask) {
  hw::Profile prof = test_profile();
  prof.collective_step = costs.c;
  const Model model(cfg, p, costs, pairs);
  PipelineRun out;
  SimTime work = 0;
  for (int r = 0; r < p; ++r) {
    out.orders.push_back(stage_order(cfg, p, r, m));
    for (const Task& t : out.orders.back()) {
      work += model.cost(t);
    }
  }
  out.work_s = static_cast<double>(work) * kUnit / static_cast<double>(kUs);
  const std::map<OpKey, Produced> produced = list_schedule(out.orders, model);
  std::vector<RankGraph> graphs;
  for (int r = 0; r < p; ++r) {
    graphs.push_back(
        stage_graph(out.graph, model, r, out.orders[static_cast<std::size_t>(r)], produced));
  }
  set_per_rank(out.graph, graphs);
  out.stats = run(out.graph, make_cluster(prof, 8), prof, /*timeline=*/true);
  return out;
}

PipelineRun run_pipeline(ScheduleKind kind, int p, int m, const Costs& costs = {},
                         Pairs pairs = Pairs::kOneTask) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  return run_pipeline(cfg, p, m, costs, pairs);
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
  return static_cast<double>(m + p - 1) * static_cast<double>(c.f + c.b + c.w) * kUnit /
         static_cast<double>(kUs);
}

// Section 2.0: bubble of rank r = T - busy_r, so sum_r(T - busy_r) = p*T - total work; with
// free communication nothing is exposed and the per-rank idle is exactly that bubble.
// `work_s` is the expected total compute of all ranks, in seconds.
void expect_bubble_identity(const RunStats& s, int p, double work_s, const Costs& c) {
  const double t = s.step_time_s;
  double bubbles = 0.0;
  double idle = 0.0;
  double busy = 0.0;
  for (const RankStats& r : s.ranks) {
    bubbles += t - r.compute_s;
    idle += r.idle_s;
    busy += r.compute_s;
  }
  EXPECT_EQ(s.ranks.size(), static_cast<std::size_t>(p));
  EXPECT_NEAR(busy, work_s, 1e-15);
  EXPECT_NEAR(bubbles, static_cast<double>(p) * t - work_s, 1e-15);
  if (c.c == 0) {
    EXPECT_NEAR(idle, bubbles, 1e-15);
  }
}

// The same for flat and interleaved schedules: p*m*(F+B+W) of work.
void expect_bubble_identity(const RunStats& s, int p, int m, const Costs& c) {
  expect_bubble_identity(s, p,
                         static_cast<double>(p) * static_cast<double>(m) *
                             static_cast<double>(c.f + c.b + c.w) * kUnit /
                             static_cast<double>(kUs),
                         c);
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

// --- Sections 2.4 and 2.8: split backward (ZB-H1, DualPipeV) ------------------------------

// The makespan in time units: T = m(F+B+W) + (p-1)(F+B-W) (section 2.4, ZB-H1).
double zb_h1_makespan(int p, int m, double f, double b, double w) {
  return m * (f + b + w) + (p - 1) * (f + b - w);
}

const std::vector<std::string>& golden_zb_h1_p4_m8() {
  static const std::vector<std::string> golden = {
      "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
      "F0 F1 F2 b0 F3 B1 F4 B2 F5 B3 F6 B4 F7 b5 w0 b6 w5 b7 w6 w7",
      "F0 F1 b0 F2 b1 F3 B2 F4 B3 F5 B4 F6 B5 F7 b6 w0 b7 w1 w6 w7",
      "F0 b0 F1 b1 F2 b2 F3 B3 F4 B4 F5 B5 F6 B6 F7 b7 w0 w1 w2 w7"};
  return golden;
}

TEST(Pipeline, ZeroBubbleH1P4M8ExecutesGoldenOrdersWithGoldenMakespans) {
  struct Case {
    double f, b, w;
    double zb, one_f_one_b;  // time units
  };
  for (const Case& k :
       {Case{1, 1, 1, 27, 33}, Case{1, 1, 0.5, 24.5, 27.5}, Case{2, 2, 1, 49, 55}}) {
    const Costs costs = costs_of(k.f, k.b, k.w);
    const std::string what = "(F, B, W) = (" + std::to_string(k.f) + ", " + std::to_string(k.b) +
                             ", " + std::to_string(k.w) + ")";
    PipelineRun pr = run_pipeline(ScheduleKind::kZbH1, 4, 8, costs);
    const RunStats& s = pr.stats;
    EXPECT_NEAR(s.step_time_s, units(k.zb), 1e-15) << what;
    EXPECT_NEAR(s.step_time_s, units(zb_h1_makespan(4, 8, k.f, k.b, k.w)), 1e-15) << what;
    EXPECT_NEAR(pr.work_s, units(4 * 8 * (k.f + k.b + k.w)), 1e-15) << what;
    ASSERT_EQ(s.ranks.size(), 4U) << what;
    for (const RankStats& r : s.ranks) {
      const auto rank = static_cast<std::size_t>(r.rank);
      EXPECT_NEAR(r.compute_s, units(8 * (k.f + k.b + k.w)), 1e-15) << what << " rank " << rank;
      EXPECT_EQ(synth::schedule::to_string(pr.orders[rank]), golden_zb_h1_p4_m8()[rank]);
      EXPECT_EQ(executed_order(pr, r.rank), golden_zb_h1_p4_m8()[rank]) << what << " rank " << rank;
    }
    // Peak F -> W residency is p on every rank (section 2.4).
    EXPECT_EQ(peaks(s), (std::vector<double>{4, 4, 4, 4})) << what;
    expect_bubble_identity(s, 4, pr.work_s, costs);
    expect_bubble_identity(s, 4, 8, costs);
    expect_equal_idle(s);

    // 1F1B with the fused backward B + W, for comparison.
    const RunStats base = run_pipeline(ScheduleKind::k1F1B, 4, 8, costs).stats;
    EXPECT_NEAR(base.step_time_s, units(k.one_f_one_b), 1e-15) << what;
    EXPECT_NEAR(base.step_time_s, flush_makespan(4, 8, costs), 1e-15) << what;
    EXPECT_LT(s.step_time_s, base.step_time_s) << what;
    expect_bubble_identity(base, 4, 8, costs);
  }
}

ScheduleConfig dualpipev() {
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kDualPipeV;
  return cfg;
}

// Section 2.8 with F&B = F + B (B the full backward b + w): T = 2M(F+B) + (N-1)(F+2B-3W).
double dualpipev_makespan(int n, int m, double f, double b, double w) {
  return 2 * m * (f + b + w) + (n - 1) * (f + 2 * (b + w) - 3 * w);
}

TEST(Pipeline, DualPipeVMakespansMatchReference) {
  struct Case {
    int n, m;
    double f, b, w;
    double expected;  // time units
  };
  for (const Case& k :
       {Case{4, 8, 1, 1, 1, 54}, Case{4, 10, 1, 1, 1, 66}, Case{4, 20, 1, 1, 1, 126},
        Case{2, 4, 1, 1, 1, 26}, Case{8, 16, 1, 1, 1, 110}, Case{4, 8, 1, 1, 0.5, 47.5}}) {
    const Costs costs = costs_of(k.f, k.b, k.w);
    const std::string what = "N=" + std::to_string(k.n) + " M=" + std::to_string(k.m) +
                             " (F, B, W) = (" + std::to_string(k.f) + ", " + std::to_string(k.b) +
                             ", " + std::to_string(k.w) + ")";
    PipelineRun pr = run_pipeline(dualpipev(), k.n, k.m, costs);
    const RunStats& s = pr.stats;
    EXPECT_NEAR(s.step_time_s, units(k.expected), 1e-15) << what;
    EXPECT_NEAR(s.step_time_s, units(dualpipev_makespan(k.n, k.m, k.f, k.b, k.w)), 1e-15) << what;
    // Two chunks per rank, each a full F + B + W per microbatch.
    const double per_rank = 2 * k.m * (k.f + k.b + k.w);
    EXPECT_NEAR(pr.work_s, units(k.n * per_rank), 1e-15) << what;
    ASSERT_EQ(s.ranks.size(), static_cast<std::size_t>(k.n)) << what;
    double peak = 0;
    for (const RankStats& r : s.ranks) {
      EXPECT_NEAR(r.compute_s, units(per_rank), 1e-15) << what << " rank " << r.rank;
      EXPECT_NEAR(r.idle_s, units(k.expected - per_rank), 1e-15) << what << " rank " << r.rank;
      EXPECT_EQ(r.stage, r.rank) << what;
      EXPECT_LE(r.peak_memory, 2 * k.n + 1) << what << " rank " << r.rank;
      peak = std::max(peak, r.peak_memory);
    }
    // Peak in-flight: 2N + 1 chunk-activations (README "PP+1" with PP = 2N).
    EXPECT_EQ(peak, 2 * k.n + 1) << what;
    expect_bubble_identity(s, k.n, pr.work_s, costs);
  }
}

TEST(Pipeline, DualPipeVN4M8ExecutesGoldenOrdersWithGoldenIdleAndPeak) {
  const Costs costs = costs_of(1, 1, 1);
  PipelineRun pr = run_pipeline(dualpipev(), 4, 8, costs);
  const RunStats& s = pr.stats;
  EXPECT_NEAR(s.step_time_s, units(54), 1e-15);
  // Section 2.8's golden orders; each pair is one compute node named as to_string prints it.
  const std::string r0 =
      "F0s0 F1s0 F2s0 F3s0 F4s0 F5s0 F6s0 F0s7 b0s7 w0s7 F1s7 b1s7 w1s7 F2s7 b2s7 w2s7 F3s7 "
      "[F7s0&B3s7] [F4s7&B0s0] B4s7 [F5s7&B1s0] B5s7 [F6s7&B2s0] B6s7 [F7s7&B3s0] B7s7 b4s0 "
      "w4s0 b5s0 w5s0 b6s0 w6s0 b7s0 w7s0";
  const std::string r3 =
      "F0s3 F0s4 F1s3 F1s4 F2s3 F2s4 F3s3 F3s4 F4s3 B0s4 [F4s4&B0s3] [F5s3&B1s4] [F5s4&B1s3] "
      "[F6s3&B2s4] [F6s4&B2s3] [F7s3&B3s4] [F7s4&B3s3] B4s4 B4s3 B5s4 B5s3 b6s4 b6s3 b7s4 b7s3 "
      "w6s4 w6s3 w7s4 w7s3";
  EXPECT_EQ(executed_order(pr, 0), r0);
  EXPECT_EQ(executed_order(pr, 3), r3);
  ASSERT_EQ(s.ranks.size(), 4U);
  for (const RankStats& r : s.ranks) {
    // Every rank runs exactly its generated order: work 48, idle 6.
    EXPECT_EQ(executed_order(pr, r.rank),
              synth::schedule::to_string(pr.orders[static_cast<std::size_t>(r.rank)], true, 's'))
        << "rank " << r.rank;
    EXPECT_NEAR(r.compute_s, units(48), 1e-15) << "rank " << r.rank;
    EXPECT_NEAR(r.idle_s, units(6), 1e-15) << "rank " << r.rank;
  }
  // 2N + 1 = 9 chunk-activations in flight; every rank reaches it.
  const std::vector<double> peak = peaks(s);
  EXPECT_EQ(*std::max_element(peak.begin(), peak.end()), 9);
  EXPECT_EQ(peak, (std::vector<double>{9, 9, 9, 9}));
  expect_bubble_identity(s, 4, pr.work_s, costs);
  EXPECT_NEAR(pr.work_s, units(4 * 48), 1e-15);
}

// "[F7s0&B3s7] B4s7" -> "F7s0 B3s7 B4s7".
std::string without_pairs(const std::string& order) {
  std::string out;
  for (char ch : order) {
    if (ch == '&') {
      out += ' ';
    } else if (ch != '[' && ch != ']') {
      out += ch;
    }
  }
  return out;
}

// Splitting each F&B pair into two consecutive nodes lets the forward start before the
// backward's gradient arrives, which the F&B = F + B model of sections 2.7-2.8 does not do:
// the order is the same, the makespan can only shrink. `makespan(n, m)` is the closed form.
template <typename Makespan>
void expect_pairs_as_two_nodes(const ScheduleConfig& cfg, Makespan makespan) {
  for (const auto& [n, m] : {std::pair{4, 8}, std::pair{2, 4}, std::pair{8, 16}}) {
    const Costs costs = costs_of(1, 1, 1);
    PipelineRun split = run_pipeline(cfg, n, m, costs, Pairs::kBackToBack);
    const std::string what = "N=" + std::to_string(n) + " M=" + std::to_string(m);
    EXPECT_LE(split.stats.step_time_s, units(makespan(n, m)) + 1e-15) << what;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(executed_order(split, r),
                without_pairs(synth::schedule::to_string(split.orders[static_cast<std::size_t>(r)],
                                                         true, 's')))
          << what << " rank " << r;
    }
    expect_bubble_identity(split.stats, n, split.work_s, costs);
  }
}

TEST(Pipeline, DualPipeVPairsAsTwoNodesRunTheSameOrderNoLater) {
  expect_pairs_as_two_nodes(dualpipev(),
                            [](int n, int m) { return dualpipev_makespan(n, m, 1, 1, 1); });
}

}  // namespace
}  // namespace tessera::sim

namespace tessera::sim {
namespace {

// --- Section 2.7: DualPipe (two pipes in opposite directions) ------------------------------

ScheduleConfig dualpipe() {
  ScheduleConfig cfg;
  cfg.kind = ScheduleKind::kDualPipe;
  return cfg;
}

// Section 2.7 with F&B = F + B (B the full backward b + w): T = M(F+B) + (N/2-1)(F+2B-3W).
double dualpipe_makespan(int n, int m, double f, double b, double w) {
  return m * (f + b + w) + (n / 2 - 1) * (f + 2 * (b + w) - 3 * w);
}

// The point-to-point messages of a run: the zero-byte sends of the graph builder.
std::size_t sends(const PipelineRun& pr) {
  std::size_t count = 0;
  for (std::int32_t r = 0; r < pr.graph.num_ranks; ++r) {
    for (const graph::Node& n : pr.graph.graph_of(r).nodes) {
      count += n.kind == graph::NodeKind::kSend ? 1 : 0;
    }
  }
  return count;
}

TEST(Pipeline, DualPipeMakespansIdleMemoryAndMessagesMatchReference) {
  struct Case {
    int n, m;
    double f, b, w;
    double expected, idle;  // time units
  };
  for (const Case& k : {Case{4, 8, 1, 1, 1, 26, 2}, Case{8, 16, 1, 1, 1, 54, 6},
                        Case{8, 20, 1, 1, 1, 66, 6}, Case{8, 16, 2, 2, 1, 95, 15}}) {
    const Costs costs = costs_of(k.f, k.b, k.w);
    const std::string what = "N=" + std::to_string(k.n) + " M=" + std::to_string(k.m) +
                             " (F, B, W) = (" + std::to_string(k.f) + ", " + std::to_string(k.b) +
                             ", " + std::to_string(k.w) + ")";
    PipelineRun pr = run_pipeline(dualpipe(), k.n, k.m, costs);
    const RunStats& s = pr.stats;
    EXPECT_NEAR(s.step_time_s, units(k.expected), 1e-15) << what;
    EXPECT_NEAR(s.step_time_s, units(dualpipe_makespan(k.n, k.m, k.f, k.b, k.w)), 1e-15) << what;
    // Two stages per rank (one per pipe), M/2 microbatches each: M(F+B+W) of work per rank.
    const double per_rank = k.m * (k.f + k.b + k.w);
    EXPECT_NEAR(pr.work_s, units(k.n * per_rank), 1e-15) << what;
    ASSERT_EQ(s.ranks.size(), static_cast<std::size_t>(k.n)) << what;
    for (const RankStats& r : s.ranks) {
      EXPECT_NEAR(r.compute_s, units(per_rank), 1e-15) << what << " rank " << r.rank;
      EXPECT_NEAR(r.idle_s, units(k.idle), 1e-15) << what << " rank " << r.rank;
      // Peak in-flight: N + 1 stage activations on every rank (README "PP+1").
      EXPECT_EQ(r.peak_memory, k.n + 1) << what << " rank " << r.rank;
      EXPECT_EQ(executed_order(pr, r.rank),
                synth::schedule::to_string(pr.orders[static_cast<std::size_t>(r.rank)], true, 's'))
          << what << " rank " << r.rank;
    }
    // 2M(N-1) messages: each pipe sends M/2 activations and M/2 gradients over N-1 links.
    EXPECT_EQ(sends(pr), static_cast<std::size_t>(2 * k.m * (k.n - 1))) << what;
    expect_bubble_identity(s, k.n, pr.work_s, costs);
    expect_equal_idle(s);
  }
}

TEST(Pipeline, DualPipeN4M8RunsBothPipesOnEveryRank) {
  PipelineRun pr = run_pipeline(dualpipe(), 4, 8, costs_of(1, 1, 1));
  const Placement place(dualpipe(), 4);
  ASSERT_EQ(place.pipes(), 2);
  for (int r = 0; r < 4; ++r) {
    // Rank r: stage r of pipe A (chunk 0) and stage 3-r of pipe B (virtual 7-r, chunk 1),
    // four microbatches each.
    std::vector<int> forwards(2, 0);
    for (const Task& t : pr.orders[static_cast<std::size_t>(r)]) {
      EXPECT_EQ(t.stage, t.chunk == 0 ? r : 7 - r) << "rank " << r;
      EXPECT_EQ(place.pipe_of(t.stage), t.chunk) << "rank " << r;
      forwards[static_cast<std::size_t>(t.chunk)] += t.kind == Task::kForward ? 1 : 0;
    }
    EXPECT_EQ(forwards, (std::vector<int>{4, 4})) << "rank " << r;
  }
  // Rank 0 starts pipe A, rank 3 starts pipe B: their first forwards need no input.
  EXPECT_EQ(executed_order(pr, 0).substr(0, 14), "F0s0 F1s0 F2s0");
  EXPECT_EQ(executed_order(pr, 3).substr(0, 14), "F0s4 F1s4 F2s4");
}

TEST(Pipeline, DualPipePairsAsTwoNodesRunTheSameOrderNoLater) {
  expect_pairs_as_two_nodes(dualpipe(),
                            [](int n, int m) { return dualpipe_makespan(n, m, 1, 1, 1); });
}

// --- Section 2.5: ZB-H2 (one iteration, hard barrier) --------------------------------------

// Section 2.5's lower bound: the last stage cannot start before (p-1)F.
double zb_h2_bound(int p, int m, double f, double b, double w) {
  return m * (f + b + w) + (p - 1) * f;
}

// The peak of (forwards run - weight gradients run) along a rank's order.
int peak_in_flight(const std::vector<Task>& order) {
  int now = 0;
  int peak = 0;
  for (const Task& t : order) {
    now += t.kind == Task::kForward ? 1 : t.kind == Task::kWeight ? -1 : 0;
    peak = std::max(peak, now);
  }
  return peak;
}

TEST(Pipeline, ZeroBubbleH2ReachesTheSingleIterationBound) {
  struct Case {
    int p, m;
    double f, b, w;
    double expected;  // time units
  };
  // The order comes from the unit-cost greedy; timed with other costs it still meets the
  // bound in these cases: (1,1,1) -> 27, (1,1,0.5) -> 23, (2,2,1) -> 46 at p=4, m=8 (the
  // reference greedy's figures, which used the real costs), 55 / 47 / 94 at p=8, m=16, and
  // (1,2,1) / (1,1,2) -> 35 at p=4, m=8.
  for (const Case& k :
       {Case{4, 8, 1, 1, 1, 27}, Case{4, 8, 1, 1, 0.5, 23}, Case{4, 8, 2, 2, 1, 46},
        Case{4, 8, 1, 2, 1, 35}, Case{4, 8, 1, 1, 2, 35}, Case{8, 16, 1, 1, 1, 55},
        Case{8, 16, 1, 1, 0.5, 47}, Case{8, 16, 2, 2, 1, 94}, Case{4, 16, 1, 1, 1, 51}}) {
    const Costs costs = costs_of(k.f, k.b, k.w);
    const std::string what = "p=" + std::to_string(k.p) + " m=" + std::to_string(k.m) +
                             " (F, B, W) = (" + std::to_string(k.f) + ", " + std::to_string(k.b) +
                             ", " + std::to_string(k.w) + ")";
    PipelineRun pr = run_pipeline(ScheduleKind::kZbH2, k.p, k.m, costs);
    const RunStats& s = pr.stats;
    EXPECT_GE(s.step_time_s, units(zb_h2_bound(k.p, k.m, k.f, k.b, k.w)) - 1e-15) << what;
    EXPECT_NEAR(s.step_time_s, units(k.expected), 1e-15) << what;
    EXPECT_NEAR(s.step_time_s, units(zb_h2_bound(k.p, k.m, k.f, k.b, k.w)), 1e-15) << what;
    ASSERT_EQ(s.ranks.size(), static_cast<std::size_t>(k.p)) << what;
    for (const RankStats& r : s.ranks) {
      const auto& order = pr.orders[static_cast<std::size_t>(r.rank)];
      EXPECT_LE(peak_in_flight(order), 2 * k.p - 1) << what << " rank " << r.rank;
      EXPECT_LE(r.peak_memory, 2 * k.p - 1) << what << " rank " << r.rank;
      EXPECT_EQ(executed_order(pr, r.rank), synth::schedule::to_string(order))
          << what << " rank " << r.rank;
    }
    expect_bubble_identity(s, k.p, k.m, costs);
  }
}

TEST(Pipeline, ZeroBubbleH2BeatsH1AndHoldsTwiceTheActivations) {
  const Costs costs = costs_of(1, 1, 1);
  PipelineRun h2 = run_pipeline(ScheduleKind::kZbH2, 4, 8, costs);
  PipelineRun h1 = run_pipeline(ScheduleKind::kZbH1, 4, 8, costs);
  // With F = B = W both reach 27 in one iteration with a barrier (the bound); H2's gain only
  // shows when iterations interlock (section 2.5). It keeps up to 2p-1 = 7 in flight.
  EXPECT_LE(h2.stats.step_time_s, h1.stats.step_time_s + 1e-15);
  EXPECT_EQ(peaks(h2.stats), (std::vector<double>{7, 7, 7, 7}));
  // Fewer microbatches than stages: the bound (12) is out of reach, the greedy takes 13.
  PipelineRun few = run_pipeline(ScheduleKind::kZbH2, 4, 3, costs);
  EXPECT_NEAR(few.stats.step_time_s, units(13), 1e-15);
  EXPECT_GE(few.stats.step_time_s, units(zb_h2_bound(4, 3, 1, 1, 1)));
  expect_bubble_identity(few.stats, 4, 3, costs);
}

}  // namespace
}  // namespace tessera::sim
