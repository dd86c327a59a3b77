// SPDX-License-Identifier: Apache-2.0
// Skewed MoE routing in the report (docs/moe.md): the most loaded rank, the tokens dropped at
// the capacity factor, and what the imbalance costs against the same step with balanced
// routing (Metrics::balanced_step_s, which the caller simulates).
#include "sim/report/expert_load.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace tessera::sim::report {

ExpertLoadSummary expert_load_summary(const RunStats& r) {
  ExpertLoadSummary out;
  double sum = 0.0;
  for (const RankStats& k : r.ranks) {
    if (k.expert_load_max > out.max_load) {
      out.max_load = k.expert_load_max;
      out.max_rank = k.rank;
    }
    sum += k.expert_load;
    out.dropped_tokens += k.dropped_tokens;
  }
  out.mean_load = r.ranks.empty() ? 1.0 : sum / static_cast<double>(r.ranks.size());
  return out;
}

void print_expert_load(std::ostream& out, const RunStats& r, const Metrics& m) {
  if (!r.expert_loads) {
    return;
  }
  const ExpertLoadSummary e = expert_load_summary(r);
  fmt::print(out,
             "  expert load      largest {:.2f}x balanced (rank {}), mean {:.2f}x; {:.4g} routed "
             "token copies dropped\n",
             e.max_load, e.max_rank, e.mean_load, e.dropped_tokens);
  if (m.balanced_step_s > 0.0) {
    fmt::print(out, "  imbalance costs  {:+.3f} s ({:+.1f} %) over balanced routing ({:.3f} s)\n",
               r.step_time_s - m.balanced_step_s,
               100.0 * (r.step_time_s - m.balanced_step_s) / m.balanced_step_s, m.balanced_step_s);
  }
}

nlohmann::json expert_load_json(const RunStats& r, const Metrics& m) {
  const ExpertLoadSummary e = expert_load_summary(r);
  nlohmann::json j = {{"max_load", e.max_load},
                      {"max_load_rank", e.max_rank},
                      {"mean_load", e.mean_load},
                      {"dropped_token_copies", e.dropped_tokens}};
  if (m.balanced_step_s > 0.0) {
    j["balanced_step_time_s"] = m.balanced_step_s;
  }
  return j;
}

}  // namespace tessera::sim::report
