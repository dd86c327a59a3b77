// SPDX-License-Identifier: Apache-2.0
// `tessera search`: every point of a space of parallel configurations (search/space.h) made a
// scenario, checked by the scenario's validation, pruned by a lower bound on its peak HBM
// (search/memory_bound.h), the survivors simulated in parallel, and the fitting ones ranked
// by an objective. Each point's result depends on the point alone, so that the results are the
// same for any thread count, shard or resumed run (docs/search.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/compare.h"
#include "experiments/search/space.h"

namespace tessera::experiments::search {

enum class Status : unsigned char {
  kRan,         // simulated, and its peak fits the memory limit
  kOverMemory,  // simulated, but its peak does not fit
  kPruned,      // its memory lower bound does not fit: not simulated
  kInvalid,     // not a valid scenario (or one the simulator cannot run)
  kDuplicate,   // the same run as an earlier point
};
std::string_view status_name(Status s);  // "ran", "over_memory", "pruned", "invalid", "duplicate"
// The status of that name; base::InputError otherwise.
Status parse_status(std::string_view name);

enum class Objective : unsigned char { kStepTime, kMfu, kTokensPerS };
// "step_time", "mfu" or "tokens_per_s"; base::InputError naming --objective otherwise.
Objective parse_objective(const std::string& name);
std::string_view objective_name(Objective o);

struct PointResult {
  std::uint64_t index = 0;
  Status status = Status::kInvalid;
  std::string reason;  // kInvalid, kDuplicate, kPruned: what rejects it, as counted
  std::string detail;  // the full message
  std::int64_t dp = 0;
  std::int64_t microbatches = 0;
  double memory_bound = 0.0;  // bytes; 0 where the point is not valid
  Row run{};                  // kRan, kOverMemory: the simulated figures
  // kOverMemory: the simulation stopped where a rank first went over the limit, so run has
  // only peak_hbm, the bytes that rank then held.
  bool stopped = false;
  [[nodiscard]] bool simulated() const {
    return status == Status::kRan || status == Status::kOverMemory;
  }
};

// Which points a run covers: those whose number is `index` modulo `count` (--shard i/N, for
// Slurm job arrays and MPI ranks).
struct Shard {
  int index = 0;
  int count = 1;
  bool operator==(const Shard&) const = default;
};
// "i/N" with 0 <= i < N; base::InputError naming --shard otherwise.
Shard parse_shard(const std::string& text);

struct Request {
  std::string scenario;           // the YAML file
  std::vector<std::string> sets;  // --set overrides, applied first
  std::int64_t devices = 0;       // 0: the scenario's
  std::vector<std::string> vary;  // --vary arguments
  std::string space_file;         // --space; "" for none
  Objective objective = Objective::kStepTime;
  double max_memory = 1.0;  // of usable HBM
  int jobs = 0;             // 0: every core
  // Prune by the memory bound, and stop a simulation where a rank goes over the limit; false:
  // simulate every valid point's whole step (to check the bound).
  bool prune = true;
  Shard shard{};
  // The folder of the journal (search/journal.h): finished points are appended there, and a
  // search restarted with the same folder runs only what it lacks. "": no journal.
  std::string out;
};

struct Result {
  std::string name;  // the scenario's
  std::int64_t devices = 0;
  Objective objective = Objective::kStepTime;
  Space space{{}};
  double usable_hbm = 0.0;    // bytes per device
  double memory_limit = 0.0;  // max_memory x usable_hbm
  Shard shard{};
  std::vector<PointResult> points;  // the points the run covers (its shard's), by number
  std::vector<std::size_t> ranked;  // the points that ran and fit, best first
  std::vector<std::size_t> pareto;  // of those, the front of step time vs peak HBM, fastest first
  double prepare_s = 0.0;           // validation and memory bounds
  double simulate_s = 0.0;
};

// base::InputError for bad input: an unreadable scenario, --vary or space file, devices that
// are not whole nodes, or a space without any valid point.
Result run_search(const Request& req);

// The shards of one search, from their journal folders, as one search's result: every shard
// once, every point finished (base::InputError naming the folder otherwise).
Result merge_searches(const std::vector<std::string>& dirs, Objective objective);

// `res` (a shard's result, for its space and figures) with every shard's `points`: the
// result of the whole search.
Result join_shards(Result res, std::vector<PointResult> points);

// Orders res.points that ran and fit by the objective, and finds the Pareto front.
void rank(Result& res);

}  // namespace tessera::experiments::search
