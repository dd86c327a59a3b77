// SPDX-License-Identifier: Apache-2.0
// `tessera search --merge DIR...`: the shards of one search (--shard i/N, one --out each) joined
// into the result one process would have found.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "experiments/search/journal.h"
#include "experiments/search/search.h"

namespace tessera::experiments::search {

namespace {

// A header without what may differ between the shards of one search: the shard, and the
// scenario's path (each machine may see the same file elsewhere).
nlohmann::json common(nlohmann::json h) {
  h.erase("shard");
  h.erase("scenario");
  return h;
}

[[noreturn]] void fail_at(const std::string& dir, const std::string& message,
                          const std::string& hint = "") {
  throw base::InputError(base::SourceLoc{dir, 0, 0}, message, hint);
}

}  // namespace

Result merge_searches(const std::vector<std::string>& dirs, Objective objective) {
  if (dirs.empty()) {
    throw base::InputError("--merge: give the --out folders of a search's shards");
  }
  std::vector<JournalFile> shards;
  for (const std::string& d : dirs) {
    shards.push_back(read_journal(d));
  }
  Result res;
  try {
    res = result_of_header(shards.front().header);
  } catch (const nlohmann::json::exception& e) {
    fail_at(dirs.front(), fmt::format("not a search journal's header: {}", e.what()));
  }
  std::set<int> seen;
  const std::size_t n = res.space.size();
  std::vector<PointResult> points;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const nlohmann::json& h = shards[k].header;
    if (common(h) != common(shards.front().header)) {
      fail_at(dirs[k], fmt::format("this shard is of a different search than {}'s", dirs.front()),
              "merge the shards of one search: the same scenario, --set, --devices, space, "
              "--max-memory and pruning");
    }
    const Shard s = parse_shard(h.at("shard").get<std::string>());
    if (s.count != res.shard.count || !seen.insert(s.index).second) {
      fail_at(dirs[k], fmt::format("shard {}/{} is given twice, or does not match {}/{}", s.index,
                                   s.count, res.shard.index, res.shard.count));
    }
    const std::size_t expected =
        (n - static_cast<std::size_t>(s.index) + static_cast<std::size_t>(s.count) - 1) /
        static_cast<std::size_t>(s.count);
    if (shards[k].points.size() != expected) {
      fail_at(dirs[k],
              fmt::format("shard {}/{} has finished {} of its {} points", s.index, s.count,
                          shards[k].points.size(), expected),
              "run it again with the same arguments and --out to finish it");
    }
    points.insert(points.end(), shards[k].points.begin(), shards[k].points.end());
  }
  for (int i = 0; i < res.shard.count; ++i) {
    if (!seen.contains(i)) {
      throw base::InputError(fmt::format("--merge: shard {}/{} is missing", i, res.shard.count));
    }
  }
  res.objective = objective;
  return join_shards(std::move(res), std::move(points));
}

Result join_shards(Result res, std::vector<PointResult> points) {
  std::sort(points.begin(), points.end(),
            [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
  res.points = std::move(points);
  res.shard = Shard{};
  res.ranked.clear();
  res.pareto.clear();
  rank(res);
  return res;
}

}  // namespace tessera::experiments::search
