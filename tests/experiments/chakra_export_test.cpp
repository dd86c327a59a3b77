// SPDX-License-Identifier: Apache-2.0
// experiments::export_chakra: every rank's trace, the groups and the ASTRA-sim configs; read
// back and simulated on the scenario's cluster, the traces time as the direct run.
#include "experiments/chakra_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "experiments/pipeline.h"
#include "graph/chakra/chakra_reader.h"
#include "tests/temp_dir.h"

namespace tessera::experiments {
namespace {

namespace fs = std::filesystem;

synth::Scenario tiny(const std::vector<std::string>& sets = {}) {
  return synth::load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml", sets);
}

TEST(ChakraExport, EveryRankGroupsAndConfigs) {
  testing::TempDir dir;
  std::string prefix = dir.path() + "/tiny";
  synth::Scenario s = tiny();
  ChakraExport e = export_chakra(s, prefix);
  EXPECT_EQ(e.ranks, s.cluster.devices);
  EXPECT_GT(e.nodes, 0U);
  for (std::int32_t r = 0; r < e.ranks; ++r) {
    EXPECT_TRUE(fs::exists(graph::chakra::et_path(prefix, r))) << r;
  }
  EXPECT_EQ(e.groups_path, prefix + ".groups.json");
  EXPECT_TRUE(fs::exists(e.groups_path));
  EXPECT_TRUE(e.astra);
  for (const char* f : {".network.yml", ".system.json", ".memory.json"}) {
    EXPECT_TRUE(fs::exists(prefix + f)) << f;
  }
}

TEST(ChakraExport, RoundTripTimesAsTheDirectRun) {
  testing::TempDir dir;
  std::string prefix = dir.path() + "/tiny";
  synth::Scenario s = tiny();
  export_chakra(s, prefix);
  graph::chakra::ImportInfo info;
  graph::ExecGraph g = graph::chakra::read_chakra(prefix, {}, &info);
  ASSERT_TRUE(info.tessera);
  sim::SimOptions opt;
  opt.share_rank_classes = false;
  opt.dtype = info.precision;
  Outcome back = simulate_graph(std::move(g), hw::load_profile(s.cluster.hardware),
                                s.cluster.topology, opt, {});
  double direct = simulate_scenario(s, true, false).stats.step_time_s;
  EXPECT_NEAR(back.stats.step_time_s, direct, 1e-9 * direct);
}

TEST(ChakraExport, OneDeviceHasNoAstraConfigs) {
  testing::TempDir dir;
  std::string prefix = dir.path() + "/one";
  ChakraExport e = export_chakra(
      tiny({"parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=1", "cluster.devices=1"}),
      prefix);
  EXPECT_EQ(e.ranks, 1);
  EXPECT_FALSE(e.astra);
  EXPECT_FALSE(fs::exists(prefix + ".network.yml"));
}

}  // namespace
}  // namespace tessera::experiments
