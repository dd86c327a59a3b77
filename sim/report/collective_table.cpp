// SPDX-License-Identifier: Apache-2.0
#include "sim/report/collective_table.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <string>

#include "base/units.h"

namespace tessera::sim::report {

namespace {

std::string label(const CollectiveUse& u) {
  return fmt::format("{} {}", graph::group_kind_name(u.kind), graph::coll_type_name(u.type));
}

}  // namespace

void print_collectives(std::ostream& out, const RunStats& r) {
  if (r.rank0_collectives.empty()) {
    return;
  }
  fmt::print(out, "  collectives on rank 0 (the tuner's algorithm/protocol, calls, total time):\n");
  for (const CollectiveUse& u : r.rank0_collectives) {
    fmt::print(out, "    {:<20} {:<22} {:>6}  {:>10}\n", label(u),
               fmt::format("{}/{}", u.algorithm, u.protocol), u.calls,
               base::format_seconds(u.time_s));
  }
}

nlohmann::json collectives_json(const RunStats& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const CollectiveUse& u : r.rank0_collectives) {
    out.push_back({{"kind", std::string(graph::group_kind_name(u.kind))},
                   {"type", std::string(graph::coll_type_name(u.type))},
                   {"algorithm", std::string(u.algorithm)},
                   {"protocol", std::string(u.protocol)},
                   {"calls", u.calls},
                   {"time_s", u.time_s}});
  }
  return out;
}

}  // namespace tessera::sim::report
