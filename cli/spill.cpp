// SPDX-License-Identifier: Apache-2.0
#include "cli/spill.h"

#include <fmt/format.h>

#include <string>

#include "base/units.h"

namespace tessera::cli {

using experiments::SpillAnalysis;
using experiments::SpillRow;

void print_spill(std::ostream& out, const SpillAnalysis& a) {
  if (a.rows.empty()) {
    return;
  }
  out << fmt::format(
      "  transpose, per pipeline rank: cost model (E = {} per microbatch, F = {}) vs simulation\n",
      base::format_seconds(a.encoder_forward_s), base::format_seconds(a.stage_forward_s));
  out << fmt::format("    {:<5} {:<16} {:>11} {:>11} {:>11}   {:>11} {:>11} {:>11}\n", "rank",
                     "owns", "slack w_r", "encoder E_r", "spill", "input ready", "encoder",
                     "spill");
  for (const SpillRow& r : a.rows) {
    std::string owns;
    for (int j : r.owned) {
      owns += (owns.empty() ? "" : ",") + std::to_string(j);
    }
    if (owns.size() > 16) {
      owns = owns.substr(0, 13) + "...";
    }
    out << fmt::format("    {:<5} {:<16} {:>11} {:>11} {:>11}   {:>11} {:>11} {:>11}\n", r.stage,
                       owns, base::format_seconds(r.slack_s), base::format_seconds(r.assigned_s),
                       base::format_seconds(r.spill_s), base::format_seconds(r.ready_s),
                       base::format_seconds(r.encoder_before_s),
                       base::format_seconds(r.simulated_spill_s));
  }
  out << "    (predicted: docs/mpipe_transpose.md's w_r = E_0 + r F with roofline compute times "
         "and no\n"
         "     message latency; simulated: the same quantities as the event simulation ran them)\n";
}

nlohmann::json spill_json(const SpillAnalysis& a) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SpillRow& r : a.rows) {
    rows.push_back({{"stage", r.stage},
                    {"owned_microbatches", r.owned},
                    {"predicted_slack_s", r.slack_s},
                    {"predicted_encoder_s", r.assigned_s},
                    {"predicted_spill_s", r.spill_s},
                    {"simulated_input_ready_s", r.ready_s},
                    {"simulated_encoder_before_first_forward_s", r.encoder_before_s},
                    {"simulated_spill_s", r.simulated_spill_s}});
  }
  return {{"encoder_forward_s", a.encoder_forward_s},
          {"stage_forward_s", a.stage_forward_s},
          {"ranks", rows}};
}

}  // namespace tessera::cli
