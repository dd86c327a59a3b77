// SPDX-License-Identifier: Apache-2.0
// A search's result as a ranking: the names of statuses, objectives and shards, and the order
// of the points that fit.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "base/error.h"
#include "experiments/search/search.h"

namespace tessera::experiments::search {

namespace {

constexpr std::array<std::string_view, 3> kObjectives = {"step_time", "mfu", "tokens_per_s"};
constexpr std::array<std::string_view, 5> kStatuses = {"ran", "over_memory", "pruned", "invalid",
                                                       "duplicate"};

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

}  // namespace

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

std::string_view status_name(Status s) {
  return kStatuses[static_cast<std::size_t>(s)];
}

Status parse_status(std::string_view name) {
  for (std::size_t i = 0; i < kStatuses.size(); ++i) {
    if (kStatuses[i] == name) {
      return static_cast<Status>(i);
    }
  }
  throw base::InputError(fmt::format("a search journal names an unknown status '{}'", name));
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

Shard parse_shard(const std::string& text) {
  Shard s;
  const auto slash = text.find('/');
  const char* end = text.data() + text.size();
  bool ok = slash != std::string::npos;
  if (ok) {
    const auto a = std::from_chars(text.data(), text.data() + slash, s.index);
    const auto b = std::from_chars(text.data() + slash + 1, end, s.count);
    ok = a.ec == std::errc{} && a.ptr == text.data() + slash && b.ec == std::errc{} &&
         b.ptr == end && s.count >= 1 && s.index >= 0 && s.index < s.count;
  }
  if (!ok) {
    throw base::InputError(
        fmt::format("--shard {}: expected i/N, shard i of N counted from 0 (0 <= i < N), e.g. 0/4",
                    text.empty() ? "''" : text));
  }
  return s;
}

}  // namespace tessera::experiments::search
