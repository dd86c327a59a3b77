// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/search.h"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <optional>

#include "base/error.h"
#include "base/units.h"
#include "experiments/search/journal.h"
#include "experiments/search/memory_bound.h"
#include "experiments/search/point.h"
#include "synth/scenario/validate.h"

namespace tessera::experiments::search {

namespace {

using synth::Scenario;

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
  // --jobs may ask for more threads than cores (the limit is otherwise the core count).
  const tbb::global_control limit(
      tbb::global_control::max_allowed_parallelism,
      jobs > 0 ? static_cast<std::size_t>(jobs)
               : static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
  tbb::task_arena arena(jobs > 0 ? jobs : tbb::task_arena::automatic);
  arena.execute([&] { tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { body(i); }); });
}

// A point over `limit` bytes is over memory; with `stop`, its simulation stops there. Every
// point runs on the base's cluster (`cluster`, the calling thread's).
void simulate_point(const Scenario& base, const Space& space, double limit, bool stop,
                    const topology::Cluster& cluster, PointResult& r) {
  PointResult scratch;
  const Scenario s = *make_point(base, space, r.index, scratch);
  try {
    RunOptions run;
    run.stop_above_memory = stop ? limit : 0.0;
    run.cluster = &cluster;
    run.balanced_twin = false;
    const Outcome o = simulate_scenario(s, run);
    measure(o, r.run);
    r.status = o.metrics.oom || r.run.peak_hbm > limit ? Status::kOverMemory : Status::kRan;
  } catch (const sim::MemoryLimit& e) {
    r.status = Status::kOverMemory;
    r.stopped = true;
    r.run.peak_hbm = e.bytes();
    r.detail = fmt::format("rank {} went over the limit holding {:.2f} GiB; the simulation stopped",
                           e.rank(), e.bytes() / base::kBytesPerGiB);
  } catch (const base::Error& e) {  // a topology that cannot hold it, a deadlock
    r.status = Status::kInvalid;
    r.reason = "simulation";
    r.detail = e.what();
  }
}

// No point of the space is a valid run: bad input, with the commonest reasons.
void check_some_valid(const Result& res, const std::vector<PointResult>& all) {
  std::map<std::string, std::pair<std::size_t, std::string>> why;
  for (const PointResult& p : all) {
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
                  all.size(), res.devices, list));
}

// Every point of the space checked and bounded (cheap; every shard checks them all, so that a
// space without a valid point is an error in each): those that may run have status kRan.
std::vector<PointResult> prepare_points(const Scenario& base, const Result& res,
                                        const Request& req) {
  std::vector<PointResult> all(static_cast<std::size_t>(res.space.size()));
  for_each_index(req.jobs, all.size(), [&](std::size_t i) {
    PointResult& r = all[i];
    if (auto s = make_point(base, res.space, i, r)) {
      r.memory_bound = peak_memory_lower_bound(*s).total();
      r.status = req.prune && r.memory_bound > res.memory_limit ? Status::kPruned : Status::kRan;
      if (r.status == Status::kPruned) {
        r.reason = "memory bound";
        r.detail =
            fmt::format("at least {:.2f} GiB of the {:.2f} GiB allowed",
                        r.memory_bound / base::kBytesPerGiB, res.memory_limit / base::kBytesPerGiB);
      }
    }
  });
  return all;
}

// Simulates the run's points that may run, in parallel; with a journal, takes the points it
// has finished from it and appends the others as they finish.
void simulate_points(const Scenario& base, Result& res, const Request& req) {
  std::optional<Journal> journal;
  if (!req.out.empty()) {
    journal.emplace(req.out, search_header(req, res));
  }
  std::vector<std::size_t> todo;
  for (std::size_t k = 0; k < res.points.size(); ++k) {
    PointResult& p = res.points[k];
    if (journal) {
      if (auto it = journal->finished().find(p.index); it != journal->finished().end()) {
        p = it->second;
        continue;
      }
    }
    if (p.status == Status::kRan) {
      todo.push_back(k);
    } else if (journal) {
      journal->append(p);
    }
  }
  // A cluster per thread: its routes, cached as the points use them, serve every point.
  tbb::enumerable_thread_specific<std::optional<topology::Cluster>> clusters;
  for_each_index(req.jobs, todo.size(), [&](std::size_t k) {
    std::optional<topology::Cluster>& cluster = clusters.local();
    if (!cluster) {
      cluster.emplace(base.cluster.topology, synth::hardware_profile(base),
                      static_cast<int>(base.cluster.devices));
    }
    PointResult& p = res.points[todo[k]];
    simulate_point(base, res.space, res.memory_limit, req.prune, *cluster, p);
    if (journal) {
      journal->append(p);
    }
  });
}

}  // namespace

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
  res.shard = req.shard;
  const hw::Profile profile = synth::hardware_profile(base);
  res.usable_hbm = profile.hbm_capacity - profile.reserved_memory;
  res.memory_limit = req.max_memory * res.usable_hbm;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<PointResult> all = prepare_points(base, res, req);
  check_some_valid(res, all);
  for (std::size_t i = static_cast<std::size_t>(req.shard.index); i < all.size();
       i += static_cast<std::size_t>(req.shard.count)) {
    res.points.push_back(std::move(all[i]));
  }
  res.prepare_s = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  simulate_points(base, res, req);
  res.simulate_s = seconds_since(t1);
  rank(res);
  return res;
}

}  // namespace tessera::experiments::search
