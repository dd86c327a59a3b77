// SPDX-License-Identifier: Apache-2.0
// Files a scenario names by a relative path are found beside the scenario, wherever tessera
// runs from: a hardware profile as a samples file. A path that only exists relative to the
// working directory is still taken; one that exists nowhere is an error at its line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hwprofiles/hw_profile.h"
#include "synth/scenario/scenario.h"
#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::synth {
namespace {

std::string scenario_with_hardware(const std::string& hardware) {
  return "model: {layers: 2, hidden: 256, heads: 4, ffn: 1024, vocab: 32000}\n"
         "training: {seq_len: 128, global_batch: 8, micro_batch: 2, precision: bf16}\n"
         "parallelism: {tp: 2, pp: 2, dp: 2}\n"
         "schedule: 1f1b\n"
         "cluster:\n"
         "  hardware: " +
         hardware +
         "\n"
         "  topology: single-node\n"
         "  devices: 8\n";
}

std::string shipped_profile_text() {
  std::ifstream in(hw::profiles_dir() + "/h100-sxm.yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ScenarioPaths, HardwareProfileBesideTheScenario) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/profiles");
  dir.write("profiles/h100-sxm.yaml", shipped_profile_text());
  std::string path = dir.write("s.yaml", scenario_with_hardware("profiles/h100-sxm.yaml"));
  Scenario s = load_scenario(path);
  EXPECT_EQ(s.cluster.hardware, dir.path() + "/profiles/h100-sxm.yaml");
  EXPECT_EQ(hw::load_profile(s.cluster.hardware).name, "h100-sxm");
}

TEST(ScenarioPaths, MissingHardwareProfileNamesTheLine) {
  testing::TempDir dir;
  std::string path = dir.write("s.yaml", scenario_with_hardware("nowhere/gpu.yml"));
  std::string e = testing::error_of([&] { (void)load_scenario(path); });
  EXPECT_NE(e.find("s.yaml:6:13"), std::string::npos) << e;
  EXPECT_NE(e.find("'nowhere/gpu.yml' does not exist"), std::string::npos) << e;
  EXPECT_NE(e.find("beside the scenario"), std::string::npos) << e;
}

}  // namespace
}  // namespace tessera::synth
