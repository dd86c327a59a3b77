// SPDX-License-Identifier: Apache-2.0
// The report's lines on skewed MoE routing (expert_load.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/report/report.h"
#include "sim/run_stats.h"

namespace tessera::sim::report {

struct ExpertLoadSummary {
  double max_load = 1.0;  // the largest expert factor of any rank, layer and microbatch
  std::int32_t max_rank = 0;
  double mean_load = 1.0;       // mean over ranks of their mean factor
  double dropped_tokens = 0.0;  // routed token copies dropped, all ranks
};

ExpertLoadSummary expert_load_summary(const RunStats& r);
// Nothing when routing is balanced (r.expert_loads false).
void print_expert_load(std::ostream& out, const RunStats& r, const Metrics& m);
nlohmann::json expert_load_json(const RunStats& r, const Metrics& m);

}  // namespace tessera::sim::report
