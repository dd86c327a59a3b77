// SPDX-License-Identifier: Apache-2.0
#include "synth/schedule/transpose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>

#include "base/error.h"

namespace tessera::synth::schedule {

namespace {

// The stage-0 forward of a microbatch: the task that consumes the encoder's features.
bool first_stage_forward(const Task& t) {
  return t.kind == Task::kForward && t.stage == 0;
}

// The stage-0 backward that produces dL/dfeatures: the fused backward, or the input-gradient
// half of a split one (the weight half never feeds the encoder).
bool first_stage_backward(const Task& t) {
  return (t.kind == Task::kBackward || t.kind == Task::kBackwardInput) && t.stage == 0;
}

// 1F1B's estimate of when rank 0 starts F(0, j), counted from its first body forward, with
// uniform stage costs: the warmup forwards run back to back (j F for j < p); from j = p on,
// F(0, j) follows B(0, j - p), which waits for the first microbatch's round trip through the
// pipeline (p F + (p-1) B + 2 (p-1) c) and then one F + B per microbatch.
double first_forward_start(int j, int ranks, const TransposeCosts& c) {
  if (j < ranks) {
    return j * c.stage_forward;
  }
  return j * (c.stage_forward + c.stage_backward) + 2.0 * (ranks - 1) * c.latency;
}

// The paper's ByMicrobatch greedy (docs/mpipe_transpose.md): microbatch 0 goes to rank 0; each
// later microbatch j goes to the rank that keeps max_r spill_r smallest, where rank r's warmup
// slack is w_r = E_0 + r (F + c) and spill_r = max(0, E_r - w_r) for its prefix work E_r.
// Only ranks that finish E(j) (after the work already in their prefix) by j's deadline are
// eligible, the deadline being 1F1B's start of F(0, j) behind rank 0's prefix, minus one
// gather latency; when no rank is, every rank is. Ties go toward the larger slack left for
// microbatch j (deadline minus finish: the less loaded rank), then toward the lower rank. With
// uniform E and m <= p every unused rank ties on both spill and slack, so owner(j) = j, as in
// hyper-parallel.
std::vector<int> greedy_owners(int ranks, int microbatches, const TransposeCosts& c) {
  const std::vector<double>& e = c.encoder_forward;
  if (e.size() != static_cast<std::size_t>(microbatches)) {
    throw base::InternalError(fmt::format(
        "the greedy owner map needs one encoder cost per microbatch: {} for {} microbatches",
        e.size(), microbatches));
  }
  std::vector<int> owners(static_cast<std::size_t>(microbatches), 0);
  if (microbatches == 0) {
    return owners;
  }
  // Comparisons tolerate rounding at the scale of the costs.
  double scale = c.stage_forward + c.stage_backward + c.latency;
  for (double x : e) {
    scale += x;
  }
  const double eps = 1e-12 * std::max(scale, 1e-300);
  auto slack = [&](int r) { return e[0] + r * (c.stage_forward + c.latency); };
  std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
  load[0] = e[0];
  for (int j = 1; j < microbatches; ++j) {
    const double deadline = load[0] + first_forward_start(j, ranks, c) - c.latency;
    int best = -1;
    double best_peak = 0.0;
    double best_margin = 0.0;
    for (int pass = 0; pass < 2 && best < 0; ++pass) {
      for (int r = 0; r < ranks; ++r) {
        const double finish = load[static_cast<std::size_t>(r)] + e[static_cast<std::size_t>(j)];
        if (pass == 0 && finish > deadline + eps) {
          continue;
        }
        double peak = 0.0;
        for (int q = 0; q < ranks; ++q) {
          const double work = q == r ? finish : load[static_cast<std::size_t>(q)];
          peak = std::max(peak, work - slack(q));
        }
        const double margin = deadline - finish;
        const bool better = best < 0 || peak < best_peak - eps ||
                            (peak <= best_peak + eps && margin > best_margin + eps);
        if (better) {
          best = r;
          best_peak = peak;
          best_margin = margin;
        }
      }
    }
    owners[static_cast<std::size_t>(j)] = best;
    load[static_cast<std::size_t>(best)] += e[static_cast<std::size_t>(j)];
  }
  return owners;
}

Step encoder_step(Step::Kind kind, int microbatch, int peer = -1) {
  Step s;
  s.kind = kind;
  s.microbatch = microbatch;
  s.peer = peer;
  return s;
}

Step body_step(const Task& t) {
  Step s;
  s.kind = Step::kBody;
  s.task = t;
  return s;
}

}  // namespace

std::string_view owner_map_name(OwnerMap m) {
  switch (m) {
    case OwnerMap::kRoundRobin:
      return "round_robin";
    case OwnerMap::kMin:
      return "min";
    case OwnerMap::kGreedy:
      return "greedy";
  }
  return "?";
}

std::string_view encoder_training_name(EncoderTraining t) {
  switch (t) {
    case EncoderTraining::kFrozen:
      return "frozen";
    case EncoderTraining::kCentralRecompute:
      return "recompute";
    case EncoderTraining::kOwnerBackward:
      return "owner";
  }
  return "?";
}

std::vector<int> owner_map(OwnerMap mode, int ranks, int microbatches,
                           const TransposeCosts& costs) {
  if (ranks < 1 || microbatches < 0) {
    throw base::InternalError(
        fmt::format("owner map over {} ranks and {} microbatches", ranks, microbatches));
  }
  const int nt = std::min(ranks, microbatches);
  std::vector<int> owners(static_cast<std::size_t>(microbatches), 0);
  switch (mode) {
    case OwnerMap::kRoundRobin:
      for (int j = 0; j < microbatches; ++j) {
        owners[static_cast<std::size_t>(j)] = j % nt;
      }
      break;
    case OwnerMap::kMin:
      for (int j = 0; j < microbatches; ++j) {
        owners[static_cast<std::size_t>(j)] = j < nt ? j : 0;
      }
      break;
    case OwnerMap::kGreedy:
      owners = greedy_owners(ranks, microbatches, costs);
      break;
  }
  return owners;
}

// The rewrite. Per rank r, in order:
//   [P]                        centralized recompute: the parameter broadcast, on every rank
//   E<j> [>0:j] [i>0:j] ...    the forwards of the microbatches r owns and runs in its prefix,
//                              each followed by its feature send (and input send) when r > 0
//   body, patched on rank 0:
//     <o:j [i<o:j] [E<j] F(0,j)   before each stage-0 forward: the receives of a microbatch
//                                 owned by rank o > 0, or the inline forward (inline_overflow)
//     B(0,j) [R<j | X<j | g>o:j]  after each stage-0 backward when the encoder is trained
//   g<0:j X<j ...              owner-backward, ranks > 0: the encoder backwards of their
//                              microbatches, after the whole body
//   [A]                        owner-backward: the gradient all-reduce, last on every rank
//
// Placement decisions (they reproduce docs/mpipe_transpose.md's [SIM] tables exactly):
// - Centralized recompute: every forward that ran detached in a prefix, rank 0's own
//   microbatch 0 included (hyper-parallel's TRANSPOSE_FWD is detached on every rank and
//   TRANSPOSE_BWD follows every BWD(stage0, mb < NT)), is recomputed on rank 0 right after
//   its stage-0 backward (R, cost E + E_b): the table's 31 / 70 / 138 need rank 0 to pay
//   E + E_b for microbatch 0 too. Only rank 0's inline forwards (inline_overflow) keep their
//   graph and get a plain encoder backward X (cost E_b) there.
// - Owner-backward: rank 0 runs the backward of each microbatch it owns right after its
//   stage-0 backward (X, as hyper-parallel inserts it; the table's 38 and 58 need it there:
//   deferring it to the end would give less). Rank 0 sends dL/dfeatures of the others right
//   after their stage-0 backward; each owner r > 0 receives them and runs its encoder
//   backwards after its last body task: nothing of r's own pipeline depends on rank 0's
//   stage-0 backward, so any earlier slot could only stall r's pipeline on the gradient.
// - The gradient all-reduce closes every rank's order (a rank owning nothing still joins).
//   Right after rank 0's last encoder backward it would deadlock: the other ranks reach it
//   only after the body, which needs rank 0.
// - Receives on rank 0 sit right before the stage-0 forward that needs them, so a late
//   owner delays only that forward. Steps never split an overlapped "F&B" pair.
std::vector<std::vector<Step>> transpose(const std::vector<std::vector<Task>>& body,
                                         const std::vector<int>& owners, EncoderTraining training,
                                         bool inline_overflow) {
  const int ranks = static_cast<int>(body.size());
  const int microbatches = static_cast<int>(owners.size());
  if (ranks < 1) {
    throw base::InternalError("transpose needs at least one rank");
  }
  for (int j = 0; j < microbatches; ++j) {
    const int o = owners[static_cast<std::size_t>(j)];
    if (o < 0 || o >= ranks) {
      throw base::InternalError(fmt::format("microbatch {} owned by rank {} of {}", j, o, ranks));
    }
  }
  // The first LLM stage must be rank 0's, with exactly one forward per microbatch.
  std::vector<int> forwards(static_cast<std::size_t>(microbatches), 0);
  for (int r = 0; r < ranks; ++r) {
    for (const Task& t : body[static_cast<std::size_t>(r)]) {
      if (t.stage != 0) {
        continue;
      }
      if (r != 0) {
        throw base::InternalError(
            fmt::format("transpose: rank {} holds the first LLM stage; it must be rank 0", r));
      }
      if (t.kind == Task::kForward) {
        if (t.microbatch < 0 || t.microbatch >= microbatches) {
          throw base::InternalError(fmt::format(
              "transpose: stage-0 forward of microbatch {} beyond the {} owned microbatches",
              t.microbatch, microbatches));
        }
        ++forwards[static_cast<std::size_t>(t.microbatch)];
      }
    }
  }
  for (int j = 0; j < microbatches; ++j) {
    if (forwards[static_cast<std::size_t>(j)] != 1) {
      throw base::InternalError(
          fmt::format("transpose: rank 0 runs {} stage-0 forwards of microbatch {}, expected one",
                      forwards[static_cast<std::size_t>(j)], j));
    }
  }

  const bool trained = training != EncoderTraining::kFrozen;
  const bool central = training == EncoderTraining::kCentralRecompute;
  const bool owner_backward = training == EncoderTraining::kOwnerBackward;

  // Rank 0's inline forwards: those it owns beyond its first one.
  std::set<int> inline_on_zero;
  if (inline_overflow) {
    bool first = true;
    for (int j = 0; j < microbatches; ++j) {
      if (owners[static_cast<std::size_t>(j)] == 0) {
        if (!first) {
          inline_on_zero.insert(j);
        }
        first = false;
      }
    }
  }

  std::vector<std::vector<Step>> plan(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    std::vector<Step>& out = plan[static_cast<std::size_t>(r)];
    const std::vector<Task>& tasks = body[static_cast<std::size_t>(r)];
    if (central) {
      out.push_back(encoder_step(Step::kParamBroadcast, -1));
    }
    for (int j = 0; j < microbatches; ++j) {
      if (owners[static_cast<std::size_t>(j)] != r || (r == 0 && inline_on_zero.count(j) > 0)) {
        continue;
      }
      out.push_back(encoder_step(Step::kEncoderForward, j));
      if (r != 0) {
        out.push_back(encoder_step(Step::kFeatureSend, j, 0));
        if (central) {
          out.push_back(encoder_step(Step::kInputSend, j, 0));
        }
      }
    }
    // The body, one unit (a task, or an overlapped pair) at a time.
    for (std::size_t i = 0; i < tasks.size();) {
      const std::size_t end = tasks[i].paired && i + 1 < tasks.size() ? i + 2 : i + 1;
      if (r == 0) {
        for (std::size_t k = i; k < end; ++k) {
          if (!first_stage_forward(tasks[k])) {
            continue;
          }
          const int j = tasks[k].microbatch;
          const int o = owners[static_cast<std::size_t>(j)];
          if (o != 0) {
            out.push_back(encoder_step(Step::kFeatureRecv, j, o));
            if (central) {
              out.push_back(encoder_step(Step::kInputRecv, j, o));
            }
          } else if (inline_on_zero.count(j) > 0) {
            out.push_back(encoder_step(Step::kEncoderForward, j));
          }
        }
      }
      for (std::size_t k = i; k < end; ++k) {
        out.push_back(body_step(tasks[k]));
      }
      if (r == 0 && trained) {
        for (std::size_t k = i; k < end; ++k) {
          if (!first_stage_backward(tasks[k])) {
            continue;
          }
          const int j = tasks[k].microbatch;
          const int o = owners[static_cast<std::size_t>(j)];
          if (central) {
            out.push_back(encoder_step(
                inline_on_zero.count(j) > 0 ? Step::kEncoderBackward : Step::kEncoderRecompute, j));
          } else if (o == 0) {
            out.push_back(encoder_step(Step::kEncoderBackward, j));
          } else {
            out.push_back(encoder_step(Step::kGradSend, j, o));
          }
        }
      }
      i = end;
    }
    if (owner_backward) {
      if (r != 0) {
        for (int j = 0; j < microbatches; ++j) {
          if (owners[static_cast<std::size_t>(j)] == r) {
            out.push_back(encoder_step(Step::kGradRecv, j, 0));
            out.push_back(encoder_step(Step::kEncoderBackward, j));
          }
        }
      }
      out.push_back(encoder_step(Step::kGradAllReduce, -1));
    }
  }
  return plan;
}

SpillPrediction predict_spill(const std::vector<std::vector<Step>>& plan,
                              const TransposeCosts& costs) {
  const std::vector<double>& e = costs.encoder_forward;
  const double e0 = e.empty() ? 0.0 : e.front();
  SpillPrediction out;
  for (std::size_t r = 0; r < plan.size(); ++r) {
    double assigned = 0.0;
    for (const Step& s : plan[r]) {
      if (s.kind == Step::kBody) {
        break;
      }
      if (s.kind == Step::kEncoderForward) {
        if (s.microbatch < 0 || static_cast<std::size_t>(s.microbatch) >= e.size()) {
          throw base::InternalError(
              fmt::format("predict_spill: no encoder cost for microbatch {} ({} given)",
                          s.microbatch, e.size()));
        }
        assigned += e[static_cast<std::size_t>(s.microbatch)];
      }
    }
    const double slack = e0 + static_cast<double>(r) * (costs.stage_forward + costs.latency);
    out.slack.push_back(slack);
    out.assigned.push_back(assigned);
    out.spill.push_back(std::max(0.0, assigned - slack));
  }
  return out;
}

std::string to_string(const std::vector<Step>& order, bool with_stage, char stage_letter) {
  std::string out;
  std::vector<Task> run;  // consecutive body tasks, printed together so that pairs stay whole
  auto add = [&out](const std::string& token) {
    if (!token.empty()) {
      out += (out.empty() ? "" : " ") + token;
    }
  };
  auto flush = [&] {
    add(to_string(run, with_stage, stage_letter));
    run.clear();
  };
  for (const Step& s : order) {
    if (s.kind == Step::kBody) {
      run.push_back(s.task);
      continue;
    }
    flush();
    const std::string mb = std::to_string(s.microbatch);
    const std::string msg = std::to_string(s.peer) + ":" + mb;
    switch (s.kind) {
      case Step::kBody:
        break;
      case Step::kParamBroadcast:
        add("P");
        break;
      case Step::kEncoderForward:
        add("E" + mb);
        break;
      case Step::kFeatureSend:
        add(">" + msg);
        break;
      case Step::kFeatureRecv:
        add("<" + msg);
        break;
      case Step::kInputSend:
        add("i>" + msg);
        break;
      case Step::kInputRecv:
        add("i<" + msg);
        break;
      case Step::kEncoderRecompute:
        add("R" + mb);
        break;
      case Step::kEncoderBackward:
        add("X" + mb);
        break;
      case Step::kGradSend:
        add("g>" + msg);
        break;
      case Step::kGradRecv:
        add("g<" + msg);
        break;
      case Step::kGradAllReduce:
        add("A");
        break;
    }
  }
  flush();
  return out;
}

std::vector<Task> strip_encoder(const std::vector<Step>& order) {
  std::vector<Task> out;
  for (const Step& s : order) {
    if (s.kind == Step::kBody) {
      out.push_back(s.task);
    }
  }
  return out;
}

}  // namespace tessera::synth::schedule
