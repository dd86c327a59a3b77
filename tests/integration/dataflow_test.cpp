// SPDX-License-Identifier: Apache-2.0
// Data flows through the pipeline: a stage's forward of a microbatch cannot start before that
// microbatch's activation has arrived from the stage before, and every op of a lowered layer
// that reads the layer's input waits for it. (A lowering bug once dropped the dependency on
// the block input, letting every stage run its forwards from time zero.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "synth/parallel/block_program.h"
#include "synth/parallel/mesh.h"
#include "tests/integration/integration_fixtures.h"

namespace tessera::integration {
namespace {

TEST(Dataflow, LayerOpsReadingTheInputDependOnIt) {
  const synth::Scenario s = tiny_like();
  const synth::StepPrograms progs = synth::build_programs(s);
  int readers = 0;
  for (std::int32_t i = 0; i < progs.layer.n_fwd; ++i) {
    const auto& deps = progs.layer.ops[static_cast<std::size_t>(i)].deps;
    readers += std::count(deps.begin(), deps.end(), synth::parallel::kFwdInput) > 0 ? 1 : 0;
  }
  // The input feeds the attention norm and the residual add.
  EXPECT_GE(readers, 2);
  EXPECT_TRUE(std::count(progs.layer.ops[0].deps.begin(), progs.layer.ops[0].deps.end(),
                         synth::parallel::kFwdInput) > 0)
      << "the first op (" << progs.layer.ops[0].name << ") reads the layer input";
}

class Dataflow : public ::testing::TestWithParam<Case> {};

// On every rank that does not hold the first virtual stage, the first compute of microbatch j
// starts no earlier than the first activation of microbatch j arrived.
TEST_P(Dataflow, StagesWaitForTheirInput) {
  const synth::Scenario& s = GetParam().scenario;
  const Outcome o = run(s, /*share=*/true, /*timeline=*/true);
  synth::parallel::Mesh mesh(s.parallel);
  std::map<std::pair<std::int32_t, std::int32_t>, base::SimTime> arrived;  // (rank, mb)
  std::map<std::pair<std::int32_t, std::int32_t>, base::SimTime> computed;
  for (const sim::Span& sp : o.stats.spans) {
    auto key = std::pair{sp.rank, sp.microbatch};
    if (o.graph.names[sp.name] == "pp.recv_activation") {
      auto [it, fresh] = arrived.emplace(key, sp.end);
      it->second = fresh ? sp.end : std::min(it->second, sp.end);
    } else if (sp.stream == graph::Stream::kCompute && sp.microbatch >= 0) {
      auto [it, fresh] = computed.emplace(key, sp.start);
      it->second = fresh ? sp.start : std::min(it->second, sp.start);
    }
  }
  int checked = 0;
  for (const auto& [key, start] : computed) {
    if (mesh.coord(key.first)[synth::Axis::kPP] == 0) {
      continue;  // holds virtual stage 0: its first forward reads data
    }
    auto it = arrived.find(key);
    ASSERT_NE(it, arrived.end()) << "rank " << key.first << " microbatch " << key.second;
    EXPECT_GE(start, it->second) << "rank " << key.first << " microbatch " << key.second;
    ++checked;
  }
  EXPECT_EQ(checked > 0, s.parallel.pp > 1);
}

INSTANTIATE_TEST_SUITE_P(Integration, Dataflow, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace tessera::integration
