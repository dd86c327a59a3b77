// SPDX-License-Identifier: Apache-2.0
// Mpipe's transpose rewrite (docs/mpipe_transpose.md; docs/pipeline_schedules.md 2.10 and 4.2) as
// pure orders: stripping the encoder steps gives back the body, the owner maps match
// hyper-parallel's mpipe_owned_micros, frozen encoders leave no backward footprint, the design
// doc's worked examples, and every message has its partner. The simulated makespans are in
// tests/sim/transpose_sim_test.cpp.
#include "synth/schedule/transpose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {
namespace {

using Plan = std::vector<std::vector<Step>>;
using Body = std::vector<std::vector<Task>>;

ScheduleConfig config(ScheduleKind kind, int chunks = 1) {
  ScheduleConfig cfg;
  cfg.kind = kind;
  cfg.chunks = chunks;
  return cfg;
}

Body body_of(const ScheduleConfig& cfg, int p, int m) {
  Body out;
  for (int r = 0; r < p; ++r) {
    out.push_back(stage_order(cfg, p, r, m));
  }
  return out;
}

TransposeCosts uniform(int m, double e, double f = 1.0, double b = 2.0, double c = 0.0) {
  TransposeCosts out;
  out.encoder_forward.assign(static_cast<std::size_t>(m), e);
  out.stage_forward = f;
  out.stage_backward = b;
  out.latency = c;
  return out;
}

// Encoder costs that differ per microbatch (images of several sizes), for the greedy map.
TransposeCosts mixed(int m) {
  TransposeCosts out = uniform(m, 0.0);
  for (int j = 0; j < m; ++j) {
    out.encoder_forward[static_cast<std::size_t>(j)] = 0.5 + (j * 7 % 5);
  }
  return out;
}

std::set<int> owned(const std::vector<int>& owners, int rank) {
  std::set<int> out;
  for (std::size_t j = 0; j < owners.size(); ++j) {
    if (owners[j] == rank) {
      out.insert(static_cast<int>(j));
    }
  }
  return out;
}

int count_steps(const std::vector<Step>& order, Step::Kind kind) {
  return static_cast<int>(
      std::count_if(order.begin(), order.end(), [kind](const Step& s) { return s.kind == kind; }));
}

int count_steps(const Plan& plan, Step::Kind kind) {
  int n = 0;
  for (const auto& order : plan) {
    n += count_steps(order, kind);
  }
  return n;
}

// Index in `order` of the body task matching `pred`, or -1.
template <class Pred>
int index_of(const std::vector<Step>& order, Pred pred) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i].kind == Step::kBody && pred(order[i].task)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int index_of(const std::vector<Step>& order, Step::Kind kind, int mb) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i].kind == kind && order[i].microbatch == mb) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int first_forward(const std::vector<Step>& order, int mb) {
  return index_of(order, [mb](const Task& t) {
    return t.kind == Task::kForward && t.stage == 0 && t.microbatch == mb;
  });
}

int first_backward(const std::vector<Step>& order, int mb) {
  return index_of(order, [mb](const Task& t) {
    return (t.kind == Task::kBackward || t.kind == Task::kBackwardInput) && t.stage == 0 &&
           t.microbatch == mb;
  });
}

// Every send has exactly one receive: (kind, source, destination, microbatch) on both sides.
void expect_messages_match(const Plan& plan, const std::string& what) {
  using Key = std::tuple<int, int, int, int>;
  std::map<Key, int> sent;
  std::map<Key, int> received;
  for (std::size_t r = 0; r < plan.size(); ++r) {
    const int rank = static_cast<int>(r);
    for (const Step& s : plan[r]) {
      switch (s.kind) {
        case Step::kFeatureSend:
        case Step::kInputSend:
        case Step::kGradSend:
          ++sent[{s.kind, rank, s.peer, s.microbatch}];
          break;
        case Step::kFeatureRecv:
          ++received[{Step::kFeatureSend, s.peer, rank, s.microbatch}];
          break;
        case Step::kInputRecv:
          ++received[{Step::kInputSend, s.peer, rank, s.microbatch}];
          break;
        case Step::kGradRecv:
          ++received[{Step::kGradSend, s.peer, rank, s.microbatch}];
          break;
        default:
          break;
      }
    }
  }
  EXPECT_EQ(sent, received) << what;
  for (const auto& [key, n] : sent) {
    EXPECT_EQ(n, 1) << what;
    EXPECT_NE(std::get<1>(key), std::get<2>(key)) << what << ": a message to itself";
  }
}

// The structural invariants of one transposed plan.
void expect_well_formed(const Body& body, const Plan& plan, const std::vector<int>& owners,
                        EncoderTraining training, bool inline_overflow, const std::string& what) {
  const int p = static_cast<int>(body.size());
  const int m = static_cast<int>(owners.size());
  ASSERT_EQ(plan.size(), body.size()) << what;
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(strip_encoder(plan[static_cast<std::size_t>(r)]), body[static_cast<std::size_t>(r)])
        << what << " rank " << r;
  }
  expect_messages_match(plan, what);

  // One encoder forward per microbatch, on its owner.
  for (int j = 0; j < m; ++j) {
    const int o = owners[static_cast<std::size_t>(j)];
    for (int r = 0; r < p; ++r) {
      const auto& order = plan[static_cast<std::size_t>(r)];
      const int n = static_cast<int>(std::count_if(order.begin(), order.end(), [j](const Step& s) {
        return s.kind == Step::kEncoderForward && s.microbatch == j;
      }));
      EXPECT_EQ(n, r == o ? 1 : 0) << what << " microbatch " << j << " rank " << r;
    }
  }

  const auto& zero = plan.front();
  const bool frozen = training == EncoderTraining::kFrozen;
  const bool central = training == EncoderTraining::kCentralRecompute;
  const bool owner = training == EncoderTraining::kOwnerBackward;
  int first_owned_by_zero = -1;
  for (int j = 0; j < m && first_owned_by_zero < 0; ++j) {
    first_owned_by_zero = owners[static_cast<std::size_t>(j)] == 0 ? j : -1;
  }
  for (int j = 0; j < m; ++j) {
    const int o = owners[static_cast<std::size_t>(j)];
    const int f = first_forward(zero, j);
    ASSERT_GE(f, 0) << what;
    const bool inlined = inline_overflow && o == 0 && j != first_owned_by_zero;
    if (o != 0) {
      const int recv = index_of(zero, Step::kFeatureRecv, j);
      EXPECT_GE(recv, 0) << what << " microbatch " << j;
      EXPECT_LT(recv, f) << what << " microbatch " << j;
      const int input = index_of(zero, Step::kInputRecv, j);
      EXPECT_EQ(input >= 0, central) << what << " microbatch " << j;
      EXPECT_LT(input, f) << what << " microbatch " << j;
    } else {
      const int e = index_of(zero, Step::kEncoderForward, j);
      EXPECT_LT(e, f) << what << " microbatch " << j;
      const int first_body = index_of(zero, [](const Task&) { return true; });
      // In the prefix, or right before its stage-0 forward when run inline.
      EXPECT_EQ(e < first_body, !inlined) << what << " microbatch " << j;
      if (inlined) {
        EXPECT_EQ(e, f - 1) << what << " microbatch " << j;
      }
    }
    const int b = first_backward(zero, j);
    ASSERT_GE(b, 0) << what;
    const int recompute = index_of(zero, Step::kEncoderRecompute, j);
    const int backward = index_of(zero, Step::kEncoderBackward, j);
    const int grad = index_of(zero, Step::kGradSend, j);
    if (frozen) {
      EXPECT_EQ(recompute, -1) << what;
      EXPECT_EQ(backward, -1) << what;
      EXPECT_EQ(grad, -1) << what;
    } else {
      // Right after the stage-0 backward (or after the overlapped pair that holds it).
      const int patch = central ? (inlined ? backward : recompute) : (o == 0 ? backward : grad);
      EXPECT_GT(patch, b) << what << " microbatch " << j;
      EXPECT_LE(patch, b + 2) << what << " microbatch " << j;
      if (central) {
        EXPECT_EQ(recompute >= 0, !inlined) << what << " microbatch " << j;
        EXPECT_EQ(grad, -1) << what;
      }
    }
    if (owner && o != 0) {
      const auto& order = plan[static_cast<std::size_t>(o)];
      const int recv = index_of(order, Step::kGradRecv, j);
      const int back = index_of(order, Step::kEncoderBackward, j);
      EXPECT_GE(recv, 0) << what << " microbatch " << j;
      EXPECT_EQ(back, recv + 1) << what << " microbatch " << j;
      // After the owner's whole body: it never waits on rank 0 mid-pipeline.
      EXPECT_GT(recv, index_of(order,
                               [&](const Task& t) {
                                 return t == body[static_cast<std::size_t>(o)].back();
                               }))
          << what;
    }
  }
  for (int r = 0; r < p; ++r) {
    const auto& order = plan[static_cast<std::size_t>(r)];
    EXPECT_EQ(count_steps(order, Step::kParamBroadcast), central ? 1 : 0) << what << " rank " << r;
    if (central) {
      EXPECT_EQ(order.front().kind, Step::kParamBroadcast) << what << " rank " << r;
    }
    EXPECT_EQ(count_steps(order, Step::kGradAllReduce), owner ? 1 : 0) << what << " rank " << r;
    if (owner) {
      EXPECT_EQ(order.back().kind, Step::kGradAllReduce) << what << " rank " << r;
    }
    if (r > 0) {
      EXPECT_EQ(count_steps(order, Step::kEncoderRecompute), 0) << what;
      EXPECT_EQ(count_steps(order, Step::kFeatureRecv), 0) << what;
    }
  }
  if (frozen) {
    for (Step::Kind k :
         {Step::kParamBroadcast, Step::kInputSend, Step::kInputRecv, Step::kEncoderRecompute,
          Step::kEncoderBackward, Step::kGradSend, Step::kGradRecv, Step::kGradAllReduce}) {
      EXPECT_EQ(count_steps(plan, k), 0) << what << " kind " << static_cast<int>(k);
    }
  }
  if (!frozen) {
    // Every microbatch's encoder gets exactly one backward (recomputed or not).
    EXPECT_EQ(
        count_steps(plan, Step::kEncoderRecompute) + count_steps(plan, Step::kEncoderBackward), m)
        << what;
  }
}

TEST(Transpose, StrippingEncoderStepsGivesBackEveryBody) {
  const ScheduleConfig kinds[] = {config(ScheduleKind::kGpipe), config(ScheduleKind::k1F1B),
                                  config(ScheduleKind::kInterleaved, 2),
                                  config(ScheduleKind::kZbH1), config(ScheduleKind::kDualPipeV)};
  int plans = 0;
  for (const ScheduleConfig& cfg : kinds) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 4, 5, 8, 12, 16}) {
        try {
          check_schedule(cfg, p, m);
        } catch (const base::InputError&) {
          continue;  // e.g. interleaved with m mod p in 1..p-1
        }
        const Body body = body_of(cfg, p, m);
        for (OwnerMap mode : {OwnerMap::kRoundRobin, OwnerMap::kMin, OwnerMap::kGreedy}) {
          const std::vector<int> owners = owner_map(mode, p, m, mixed(m));
          for (EncoderTraining training :
               {EncoderTraining::kFrozen, EncoderTraining::kCentralRecompute,
                EncoderTraining::kOwnerBackward}) {
            for (bool inl : {false, true}) {
              const std::string what =
                  schedule_label(cfg) + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
                  " " + std::string(owner_map_name(mode)) + " " +
                  std::string(encoder_training_name(training)) + (inl ? " inline" : "");
              expect_well_formed(body, transpose(body, owners, training, inl), owners, training,
                                 inl, what);
              ++plans;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(plans, 600);
}

TEST(Transpose, OwnerSetsMatchHyperParallelMpipeOwnedMicros) {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int m : {1, 2, 3, 4, 5, 7, 8, 12, 16}) {
      const int nt = std::min(p, m);
      const std::vector<int> full = owner_map(OwnerMap::kRoundRobin, p, m, {});
      const std::vector<int> min = owner_map(OwnerMap::kMin, p, m, {});
      ASSERT_EQ(full.size(), static_cast<std::size_t>(m));
      ASSERT_EQ(min.size(), static_cast<std::size_t>(m));
      for (int r = 0; r < p; ++r) {
        std::set<int> want_full;
        std::set<int> want_min;
        for (int j = 0; j < m; ++j) {
          if (r < nt && j % nt == r) {
            want_full.insert(j);
          }
          if ((r == 0 && (j == 0 || j >= nt)) || (r > 0 && r < nt && j == r)) {
            want_min.insert(j);
          }
        }
        const std::string what =
            "p=" + std::to_string(p) + " m=" + std::to_string(m) + " rank " + std::to_string(r);
        EXPECT_EQ(owned(full, r), want_full) << what;
        EXPECT_EQ(owned(min, r), want_min) << what;
        if (r >= nt) {
          EXPECT_TRUE(owned(full, r).empty()) << what;
          EXPECT_TRUE(owned(min, r).empty()) << what;
        }
        if (m <= nt) {  // both reduce to {rank}
          const std::set<int> self = r < m ? std::set<int>{r} : std::set<int>{};
          EXPECT_EQ(owned(full, r), self) << what;
          EXPECT_EQ(owned(min, r), self) << what;
        }
      }
    }
  }
}

TEST(Transpose, GreedyReducesToIdentityForUniformEncoderAndFewMicrobatches) {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int m = 1; m <= p; ++m) {
      for (double e : {0.25, 1.0, 4.0, 50.0}) {
        for (double c : {0.0, 0.5, 3.0}) {
          std::vector<int> identity(static_cast<std::size_t>(m));
          for (int j = 0; j < m; ++j) {
            identity[static_cast<std::size_t>(j)] = j;
          }
          EXPECT_EQ(owner_map(OwnerMap::kGreedy, p, m, uniform(m, e, 1.0, 2.0, c)), identity)
              << "p=" << p << " m=" << m << " E=" << e << " c=" << c;
        }
      }
    }
  }
}

TEST(Transpose, GreedyBalancesSpillAgainstSlack) {
  // p=4, m=8, E=4, F=1, B=2: microbatches 1-3 go to ranks 1-3 (their own slots); the overflow
  // goes where the spill stays smallest: rank 3 (spill 8-7=1), rank 2 (2), rank 1 (3), and
  // the last one to rank 0 (4, no worse than rank 1's 7).
  const TransposeCosts costs = uniform(8, 4.0);
  const std::vector<int> owners = owner_map(OwnerMap::kGreedy, 4, 8, costs);
  EXPECT_EQ(owners, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  const Body body = body_of(config(ScheduleKind::k1F1B), 4, 8);
  const SpillPrediction s =
      predict_spill(transpose(body, owners, EncoderTraining::kFrozen, false), costs);
  EXPECT_EQ(s.spill, (std::vector<double>{4, 3, 2, 1}));

  // One heavy image: the greedy keeps it off the ranks with little slack.
  TransposeCosts heavy = uniform(4, 1.0);
  heavy.encoder_forward[1] = 3.5;
  const std::vector<int> g = owner_map(OwnerMap::kGreedy, 4, 4, heavy);
  EXPECT_EQ(g[0], 0);
  const Body b4 = body_of(config(ScheduleKind::k1F1B), 4, 4);
  const auto max_spill = [&](const std::vector<int>& o) {
    const auto sp = predict_spill(transpose(b4, o, EncoderTraining::kFrozen, false), heavy).spill;
    return *std::max_element(sp.begin(), sp.end());
  };
  EXPECT_EQ(max_spill(g), 0.0);
  EXPECT_GT(max_spill(owner_map(OwnerMap::kRoundRobin, 4, 4, heavy)), 0.0);
}

TEST(Transpose, FrozenEncoderHasOnlyForwardsAndFeatureGather) {
  const Body body = body_of(config(ScheduleKind::k1F1B), 4, 4);
  const Plan plan =
      transpose(body, owner_map(OwnerMap::kRoundRobin, 4, 4, {}), EncoderTraining::kFrozen, false);
  EXPECT_EQ(to_string(plan[0]), "E0 F0 <1:1 F1 <2:2 F2 <3:3 F3 B0 B1 B2 B3");
  EXPECT_EQ(to_string(plan[1]), "E1 >0:1 F0 F1 F2 B0 F3 B1 B2 B3");
  EXPECT_EQ(to_string(plan[3]), "E3 >0:3 F0 B0 F1 B1 F2 B2 F3 B3");
  EXPECT_EQ(count_steps(plan, Step::kFeatureSend), 3);  // NT - 1 gathers
}

TEST(Transpose, WorkedExampleFourRanksFourMicrobatchesCentralRecompute) {
  // Design doc: PP=4, MB=4 -> NT=4; ranks 1-3 each send an output and an input; rank 0 appends
  // a TRANSPOSE_BWD (recompute + backward) for the 3 microbatches it received. It also
  // recomputes its own microbatch 0, whose prefix forward ran detached like every other
  // rank's (hyper-parallel inserts TRANSPOSE_BWD after every BWD(stage0, mb < NT));
  // docs/mpipe_transpose.md's [SIM] 31 / 70 / 138 need that fourth recompute.
  const Body body = body_of(config(ScheduleKind::k1F1B), 4, 4);
  const Plan plan = transpose(body, owner_map(OwnerMap::kRoundRobin, 4, 4, {}),
                              EncoderTraining::kCentralRecompute, false);
  for (int r = 1; r < 4; ++r) {
    const auto& order = plan[static_cast<std::size_t>(r)];
    EXPECT_EQ(count_steps(order, Step::kFeatureSend), 1) << "rank " << r;
    EXPECT_EQ(count_steps(order, Step::kInputSend), 1) << "rank " << r;
  }
  const auto& zero = plan[0];
  int received_recomputes = 0;
  for (const Step& s : zero) {
    if (s.kind == Step::kEncoderRecompute && index_of(zero, Step::kInputRecv, s.microbatch) >= 0) {
      ++received_recomputes;
    }
  }
  EXPECT_EQ(received_recomputes, 3);
  EXPECT_EQ(count_steps(zero, Step::kEncoderRecompute), 4);
  EXPECT_EQ(count_steps(zero, Step::kEncoderBackward), 0);
  EXPECT_EQ(to_string(zero),
            "P E0 F0 <1:1 i<1:1 F1 <2:2 i<2:2 F2 <3:3 i<3:3 F3 B0 R0 B1 R1 B2 R2 B3 R3");
  EXPECT_EQ(to_string(plan[1]), "P E1 >0:1 i>0:1 F0 F1 F2 B0 F3 B1 B2 B3");
}

TEST(Transpose, WorkedExampleTwoMicrobatchesLeavesRanksTwoAndThreeOnlyTheBroadcast) {
  const Body body = body_of(config(ScheduleKind::k1F1B), 4, 2);
  const Plan plan = transpose(body, owner_map(OwnerMap::kRoundRobin, 4, 2, {}),
                              EncoderTraining::kCentralRecompute, false);
  for (int r : {2, 3}) {
    const auto& order = plan[static_cast<std::size_t>(r)];
    ASSERT_FALSE(order.empty());
    EXPECT_EQ(order.front().kind, Step::kParamBroadcast) << "rank " << r;
    EXPECT_EQ(order.size(), body[static_cast<std::size_t>(r)].size() + 1) << "rank " << r;
    EXPECT_EQ(strip_encoder(order), body[static_cast<std::size_t>(r)]) << "rank " << r;
  }
  EXPECT_EQ(to_string(plan[1]), "P E1 >0:1 i>0:1 F0 F1 B0 B1");
}

TEST(Transpose, WorkedExampleInterleavedMinInlinesTheOverflow) {
  // PP=4, n_local=2, MB=8 -> NT=4: inline TRANSPOSE_FWD(4..7) right before FWD(stage0, 4..7).
  const Body body = body_of(config(ScheduleKind::kInterleaved, 2), 4, 8);
  const std::vector<int> owners = owner_map(OwnerMap::kMin, 4, 8, {});
  const Plan plan = transpose(body, owners, EncoderTraining::kFrozen, /*inline_overflow=*/true);
  EXPECT_EQ(to_string(plan[0], true),
            "E0 F0c0 <1:1 F1c0 <2:2 F2c0 <3:3 F3c0 F0c4 F1c4 F2c4 F3c4 E4 F4c0 E5 F5c0 E6 F6c0 "
            "B0c4 E7 F7c0 B1c4 F4c4 B2c4 F5c4 B3c4 F6c4 B0c0 F7c4 B1c0 B2c0 B3c0 B4c4 B5c4 B6c4 "
            "B7c4 B4c0 B5c0 B6c0 B7c0");
  // Without inlining, rank 0 runs all five in its prefix.
  const Plan prefix = transpose(body, owners, EncoderTraining::kFrozen, false);
  EXPECT_EQ(to_string(prefix[0]).substr(0, 17), "E0 E4 E5 E6 E7 F0");
}

TEST(Transpose, OwnerBackwardShipsGradientsBackAndAllReduces) {
  const Body body = body_of(config(ScheduleKind::k1F1B), 4, 4);
  const Plan plan = transpose(body, owner_map(OwnerMap::kRoundRobin, 4, 4, {}),
                              EncoderTraining::kOwnerBackward, false);
  EXPECT_EQ(to_string(plan[0]), "E0 F0 <1:1 F1 <2:2 F2 <3:3 F3 B0 X0 B1 g>1:1 B2 g>2:2 B3 g>3:3 A");
  EXPECT_EQ(to_string(plan[2]), "E2 >0:2 F0 F1 B0 F2 B1 F3 B2 B3 g<0:2 X2 A");
  // Round robin with m > p: every owner runs its backwards, in microbatch order, at the end.
  const Body body8 = body_of(config(ScheduleKind::k1F1B), 2, 5);
  const Plan plan8 = transpose(body8, owner_map(OwnerMap::kRoundRobin, 2, 5, {}),
                               EncoderTraining::kOwnerBackward, false);
  EXPECT_EQ(to_string(plan8[1]),
            "E1 >0:1 E3 >0:3 F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 g<0:1 X1 g<0:3 X3 A");
}

TEST(Transpose, SplitAndPairedBodiesAreNeverTornApart) {
  // DualPipeV pairs "F&B": encoder steps go around a pair, never inside it.
  const ScheduleConfig cfg = config(ScheduleKind::kDualPipeV);
  const Body body = body_of(cfg, 4, 8);
  for (bool inl : {false, true}) {
    const Plan plan =
        transpose(body, owner_map(OwnerMap::kMin, 4, 8, {}), EncoderTraining::kOwnerBackward, inl);
    for (const auto& order : plan) {
      for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        if (order[i].kind == Step::kBody && order[i].task.paired) {
          EXPECT_EQ(order[i + 1].kind, Step::kBody) << to_string(order, true, 's');
        }
      }
    }
  }
  // ZB-H1: rank 0 never splits; a split stage-0 backward would trigger on its "b".
  std::vector<Task> split = {
      {Task::kForward, 0, 0, 0}, {Task::kBackwardInput, 0, 0, 0}, {Task::kWeight, 0, 0, 0}};
  const Plan one = transpose({split}, {0}, EncoderTraining::kCentralRecompute, false);
  EXPECT_EQ(to_string(one[0]), "P E0 F0 b0 R0 w0");
}

TEST(Transpose, PredictSpillFollowsTheCostModel) {
  // p=m=4, F=1, B=2, E=4, owners {0,1,1,3}: w_r = E_0 + r = 4, 5, 6, 7; rank 1 has 8.
  const Body body = body_of(config(ScheduleKind::k1F1B), 4, 4);
  const TransposeCosts costs = uniform(4, 4.0);
  const SpillPrediction s =
      predict_spill(transpose(body, {0, 1, 1, 3}, EncoderTraining::kFrozen, false), costs);
  EXPECT_EQ(s.slack, (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(s.assigned, (std::vector<double>{4, 8, 0, 4}));
  EXPECT_EQ(s.spill, (std::vector<double>{0, 3, 0, 0}));
  // Latency widens the slack: w_r = E_0 + r (F + c).
  const SpillPrediction c = predict_spill(
      transpose(body, {0, 1, 1, 1}, EncoderTraining::kFrozen, false), uniform(4, 4.0, 1, 2, 0.5));
  EXPECT_EQ(c.slack, (std::vector<double>{4, 5.5, 7, 8.5}));
  EXPECT_EQ(c.spill, (std::vector<double>{0, 6.5, 0, 0}));
  // Inline forwards on rank 0 are not prefix work.
  const Body body8 = body_of(config(ScheduleKind::k1F1B), 4, 8);
  const std::vector<int> min = owner_map(OwnerMap::kMin, 4, 8, {});
  EXPECT_EQ(predict_spill(transpose(body8, min, EncoderTraining::kFrozen, true), uniform(8, 4.0))
                .assigned,
            (std::vector<double>{4, 4, 4, 4}));
  EXPECT_EQ(predict_spill(transpose(body8, min, EncoderTraining::kFrozen, false), uniform(8, 4.0))
                .assigned,
            (std::vector<double>{20, 4, 4, 4}));
}

TEST(Transpose, NamesAndPrinting) {
  EXPECT_EQ(owner_map_name(OwnerMap::kRoundRobin), "round_robin");
  EXPECT_EQ(owner_map_name(OwnerMap::kMin), "min");
  EXPECT_EQ(owner_map_name(OwnerMap::kGreedy), "greedy");
  EXPECT_EQ(encoder_training_name(EncoderTraining::kFrozen), "frozen");
  EXPECT_EQ(encoder_training_name(EncoderTraining::kCentralRecompute), "recompute");
  EXPECT_EQ(encoder_training_name(EncoderTraining::kOwnerBackward), "owner");
  const Plan dv = transpose(body_of(config(ScheduleKind::kDualPipeV), 2, 4), {0, 1, 0, 1},
                            EncoderTraining::kFrozen, false);
  EXPECT_EQ(to_string(dv[0], true, 's').substr(0, 11), "E0 E2 F0s0 ");
}

TEST(Transpose, RejectsMalformedInput) {
  const Body body = body_of(config(ScheduleKind::k1F1B), 2, 2);
  EXPECT_THROW(transpose(body, {0, 2}, EncoderTraining::kFrozen, false), base::InternalError);
  EXPECT_THROW(transpose(body, {0, 1, 0}, EncoderTraining::kFrozen, false), base::InternalError);
  EXPECT_THROW(transpose({}, {}, EncoderTraining::kFrozen, false), base::InternalError);
  Body moved = body;
  std::swap(moved[0], moved[1]);  // stage 0 on rank 1
  EXPECT_THROW(transpose(moved, {0, 1}, EncoderTraining::kFrozen, false), base::InternalError);
  EXPECT_THROW(owner_map(OwnerMap::kGreedy, 2, 3, uniform(2, 1.0)), base::InternalError);
  EXPECT_THROW(owner_map(OwnerMap::kRoundRobin, 0, 3, {}), base::InternalError);
  EXPECT_TRUE(owner_map(OwnerMap::kGreedy, 2, 0, {}).empty());
}

}  // namespace
}  // namespace tessera::synth::schedule
