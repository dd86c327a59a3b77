// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/search.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

#include "base/error.h"
#include "experiments/search/memory_bound.h"
#include "experiments/search/point.h"
#include "synth/scenario/validate.h"

namespace tessera::experiments::search {

namespace {

using synth::Scenario;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::array<std::string_view, 3> kObjectives = {"step_time", "mfu", "tokens_per_s"};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The base scenario on the search's devices; devices that are not whole nodes (or more than
// the topology holds) are bad input, named as --devices.
Scenario on_devices(Scenario base, std::int64_t devices) {
  if (devices <= 0) {
    return base;
  }
  base.cluster.devices = devices;
  if (const auto v = synth::node_violations(base); !v.empty()) {
    throw base::InputError(base::SourceLoc{fmt::format("--devices {}", devices), 0, 0},
                           v.front().message, v.front().hint);
  }
  return base;
}

Space space_of(const Scenario& base, const Request& req) {
  std::vector<AxisValues> given;
  if (!req.space_file.empty()) {
    given = read_space_file(req.space_file, base);
  }
  for (const std::string& v : req.vary) {
    given.push_back(parse_vary(v));
  }
  return make_space(base, base.cluster.devices, given, "--vary");
}

// Runs `body(i)` for i in [0, n) on `jobs` threads (0: all); each call writes only its own
// slot, so that the results do not depend on the thread count.
template <typename Body>
void for_each_index(int jobs, std::size_t n, const Body& body) {
  tbb::task_arena arena(jobs > 0 ? jobs : tbb::task_arena::automatic);
  arena.execute([&] { tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { body(i); }); });
}

void simulate_point(const Scenario& base, const Space& space, double limit, PointResult& r) {
  PointResult scratch;
  const Scenario s = *make_point(base, space, r.index, scratch);
  try {
    const Outcome o = simulate_scenario(s, true, false);
    measure(o, r.run);
    r.status = o.metrics.oom || r.run.peak_hbm > limit ? Status::kOverMemory : Status::kRan;
  } catch (const base::Error& e) {  // a topology that cannot hold it, a deadlock
    r.status = Status::kInvalid;
    r.reason = "simulation";
    r.detail = e.what();
  }
}

// Better first by the objective, then by point number.
bool better(const PointResult& a, const PointResult& b, Objective o) {
  const double ka = o == Objective::kStepTime ? a.run.step_s
                    : o == Objective::kMfu    ? -a.run.mfu
                                              : -a.run.tokens_per_s;
  const double kb = o == Objective::kStepTime ? b.run.step_s
                    : o == Objective::kMfu    ? -b.run.mfu
                                              : -b.run.tokens_per_s;
  return ka != kb ? ka < kb : a.index < b.index;
}

void rank(Result& res) {
  for (std::size_t i = 0; i < res.points.size(); ++i) {
    if (res.points[i].status == Status::kRan) {
      res.ranked.push_back(i);
    }
  }
  std::sort(res.ranked.begin(), res.ranked.end(), [&](std::size_t a, std::size_t b) {
    return better(res.points[a], res.points[b], res.objective);
  });
  std::vector<std::size_t> by_time = res.ranked;
  std::sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) {
    return better(res.points[a], res.points[b], Objective::kStepTime);
  });
  double least = 0.0;
  for (std::size_t i : by_time) {
    if (res.pareto.empty() || res.points[i].run.peak_hbm < least) {
      res.pareto.push_back(i);
      least = res.points[i].run.peak_hbm;
    }
  }
}

// No point of the space is a valid run: bad input, with the commonest reasons.
void check_some_valid(const Result& res) {
  std::map<std::string, std::pair<std::size_t, std::string>> why;
  for (const PointResult& p : res.points) {
    if (p.status != Status::kInvalid && p.status != Status::kDuplicate) {
      return;
    }
    auto& [count, example] = why[p.reason];
    count += 1;
    example = example.empty() ? p.detail : example;
  }
  std::string list;
  for (const auto& [reason, ce] : why) {
    list += fmt::format("\n  {} points: {} (e.g. {})", ce.first, reason, ce.second);
  }
  throw base::InputError(
      fmt::format("the search space of {} points has no valid configuration on {} devices:{}",
                  res.points.size(), res.devices, list));
}

}  // namespace

std::string_view status_name(Status s) {
  constexpr std::array<std::string_view, 5> kNames = {"ran", "over_memory", "pruned", "invalid",
                                                      "duplicate"};
  return kNames[static_cast<std::size_t>(s)];
}

Objective parse_objective(const std::string& name) {
  for (std::size_t i = 0; i < kObjectives.size(); ++i) {
    if (kObjectives[i] == name) {
      return static_cast<Objective>(i);
    }
  }
  throw base::InputError(fmt::format("--objective {}: expected step_time, mfu or tokens_per_s",
                                     name.empty() ? "''" : name));
}

std::string_view objective_name(Objective o) {
  return kObjectives[static_cast<std::size_t>(o)];
}

Result run_search(const Request& req) {
  if (!(req.max_memory > 0.0 && req.max_memory <= 1.0)) {
    throw base::InputError(fmt::format(
        "--max-memory {}: expected a fraction of usable HBM in (0, 1]", req.max_memory));
  }
  const Scenario base = on_devices(synth::load_scenario(req.scenario, req.sets), req.devices);
  Result res;
  res.name = base.name;
  res.devices = base.cluster.devices;
  res.objective = req.objective;
  res.space = space_of(base, req);
  const hw::Profile profile = synth::hardware_profile(base);
  res.usable_hbm = profile.hbm_capacity - profile.reserved_memory;
  res.memory_limit = req.max_memory * res.usable_hbm;
  res.points.resize(static_cast<std::size_t>(res.space.size()));
  auto t0 = std::chrono::steady_clock::now();
  for_each_index(req.jobs, res.points.size(), [&](std::size_t i) {
    PointResult& r = res.points[i];
    if (auto s = make_point(base, res.space, i, r)) {
      r.memory_bound = peak_memory_lower_bound(*s).total();
      r.status = req.prune && r.memory_bound > res.memory_limit ? Status::kPruned : Status::kRan;
      if (r.status == Status::kPruned) {
        r.reason = "memory bound";
        r.detail = fmt::format("at least {:.2f} GiB of the {:.2f} GiB allowed",
                               r.memory_bound / kGiB, res.memory_limit / kGiB);
      }
    }
  });
  check_some_valid(res);
  res.prepare_s = seconds_since(t0);
  std::vector<std::size_t> survivors;
  for (std::size_t i = 0; i < res.points.size(); ++i) {
    if (res.points[i].status == Status::kRan) {
      survivors.push_back(i);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  for_each_index(req.jobs, survivors.size(), [&](std::size_t k) {
    simulate_point(base, res.space, res.memory_limit, res.points[survivors[k]]);
  });
  res.simulate_s = seconds_since(t1);
  rank(res);
  return res;
}

}  // namespace tessera::experiments::search
