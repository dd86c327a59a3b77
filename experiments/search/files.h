// SPDX-License-Identifier: Apache-2.0
// The files `tessera search --out DIR` writes: search.csv (every point in point order, with
// its values, status, figures, rank and whether it is on the Pareto front), search.json (the
// same with the space, the rejection counts, the ranking and the front) and search.svg (the
// front: step time against peak HBM). Numbers have fixed formats, so that equal results give
// byte-identical files.
#pragma once

#include <string>
#include <vector>

#include "experiments/search/search.h"

namespace tessera::experiments::search {

// One rejection reason: how many points it rejects, and the first one's message.
struct Rejection {
  std::string status;  // invalid, duplicate, pruned
  std::string reason;
  std::size_t count = 0;
  std::string example;
};
// By status (invalid, duplicate, pruned, over_memory), then by count, most first.
std::vector<Rejection> rejections(const Result& res);

void write_search_csv(const std::string& path, const Result& res);
void write_search_json(const std::string& path, const Result& res);
void write_pareto_chart(const std::string& path, const Result& res);

}  // namespace tessera::experiments::search
