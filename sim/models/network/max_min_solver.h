// SPDX-License-Identifier: Apache-2.0
// Max-min fair rates for a set of concurrent transfers over the virtual links of a PathTable,
// by progressive filling (the bottleneck algorithm). A transfer on path P moving at rate r
// loads each virtual link v of P with r * mult(P, v).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/models/network/path_table.h"

namespace tessera::models {

// Contract: every path passed has at least one virtual link (base::InternalError otherwise);
// rates come back in the order of `paths`, all > 0, and are a deterministic function of the
// input order. Each round fixes the transfers on the most constrained virtual links at their
// fair share (remaining capacity / unfrozen multiplicity; links tied at the minimum saturate
// together); shares never decrease from one round to the next, which is what makes the
// result max-min fair.
class MaxMinSolver {
 public:
  explicit MaxMinSolver(const PathTable& table);
  void solve(const std::vector<PathId>& paths, std::vector<double>& rates);

 private:
  void load(const std::vector<PathId>& paths);
  double mark_bottlenecks();  // the smallest fair share; marks the links that have it
  void freeze(PathId path, double rate);

  const PathTable& table_;
  std::vector<double> remaining_;      // per virtual link: capacity not yet handed out
  std::vector<std::int64_t> weight_;   // per virtual link: multiplicity of unfrozen users
  std::vector<std::uint32_t> stamp_;   // per virtual link: last solve that touched it
  std::vector<std::int32_t> touched_;  // virtual links of this solve, in first-use order
  std::vector<char> bottleneck_;       // per virtual link: saturates in this round
  std::vector<char> frozen_;
  std::uint32_t generation_ = 0;
};

}  // namespace tessera::models
