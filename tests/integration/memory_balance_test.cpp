// SPDX-License-Identifier: Apache-2.0
// Memory accounting of the synthesized graphs balances: every byte a rank allocates during the
// step (activations, pipeline receive buffers, gradients of activations) is released again by
// the end of the step, so the sum of mem_alloc equals the sum of mem_free on every rank.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

// The block a node belongs to, for the report: "L3", "embed/head" or "step" (no microbatch).
std::string block_of(const graph::ExecGraph& g, const graph::Node& n) {
  if (n.microbatch < 0) {
    return "step";
  }
  if (n.layer >= 0) {
    return fmt::format("L{}", n.layer);
  }
  const std::string& name = g.names[n.name];
  return name.rfind("pp.", 0) == 0 ? "pp" : "embed/head";
}

// Alloc and free totals of one rank graph, with a per-block and per-name breakdown of where
// the unbalanced bytes sit (for the failure message).
std::string imbalance_report(const graph::ExecGraph& g, const graph::RankGraph& rg) {
  std::map<std::string, std::int64_t> by_block;  // alloc - free per block (all microbatches)
  std::map<std::int32_t, std::int64_t> by_mb;    // alloc - free per microbatch
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_name;  // microbatch 0 only
  for (const graph::Node& n : rg.nodes) {
    by_block[block_of(g, n)] += n.mem_alloc - n.mem_free;
    by_mb[n.microbatch] += n.mem_alloc - n.mem_free;
    if (n.microbatch == 0 && (n.mem_alloc != 0 || n.mem_free != 0)) {
      auto& [a, f] = by_name[g.names[n.name]];
      a += n.mem_alloc;
      f += n.mem_free;
    }
  }
  std::string out = "  alloc - free per block:";
  for (const auto& [b, d] : by_block) {
    out += fmt::format(" {}={}", b, d);
  }
  out += "\n  alloc - free per microbatch:";
  for (const auto& [mb, d] : by_mb) {
    out += fmt::format(" {}={}", mb, d);
  }
  out += "\n  microbatch 0, per node name (alloc / free):";
  for (const auto& [name, af] : by_name) {
    out += fmt::format("\n    {:<40} {:>12} {:>12}", name, af.first, af.second);
  }
  return out;
}

class MemoryBalance : public ::testing::TestWithParam<Case> {};

TEST_P(MemoryBalance, EveryAllocationIsFreedByTheEndOfTheStep) {
  const synth::Scenario& s = GetParam().scenario;
  const graph::ExecGraph g = synth::synthesize(s, {.share_rank_classes = false});
  ASSERT_EQ(g.classes.size(), static_cast<std::size_t>(s.cluster.devices));
  for (std::size_t c = 0; c < g.classes.size(); ++c) {
    const graph::RankGraph& rg = g.classes[c];
    std::int64_t alloc = 0;
    std::int64_t freed = 0;
    std::int64_t live = 0;
    std::int64_t lowest = 0;
    std::size_t lowest_at = 0;
    for (std::size_t i = 0; i < rg.nodes.size(); ++i) {
      const graph::Node& n = rg.nodes[i];
      EXPECT_GE(n.mem_alloc, 0);
      EXPECT_GE(n.mem_free, 0);
      alloc += n.mem_alloc;
      freed += n.mem_free;
      // Issue order is a topological order and a buffer is freed by a consumer of its
      // producer, so replaying it never frees more than has been allocated.
      live += n.mem_alloc - n.mem_free;
      if (live < lowest) {
        lowest = live;
        lowest_at = i;
      }
    }
    EXPECT_EQ(lowest, 0) << GetParam().name << ", rank " << g.class_rep[c]
                         << ": frees precede their allocations; live bytes reach " << lowest
                         << " at node " << lowest_at << " (" << g.names[rg.nodes[lowest_at].name]
                         << ", microbatch " << rg.nodes[lowest_at].microbatch << ")";
    EXPECT_GT(alloc, 0) << "rank " << g.class_rep[c] << " allocates nothing";
    EXPECT_EQ(alloc, freed) << GetParam().name << ", rank " << g.class_rep[c] << " (stage "
                            << rg.stage << "): allocated " << alloc << " B, freed " << freed
                            << " B, " << alloc - freed << " B still live at the end of the step\n"
                            << imbalance_report(g, rg);
  }
}

INSTANTIATE_TEST_SUITE_P(Integration, MemoryBalance, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace tessera::integration
