// SPDX-License-Identifier: Apache-2.0
// Every shipped H100 scenario beside the closest public measurement we know of
// (h100_public.yaml: source, and how its configuration differs). The README's table is this
// output (h100_public_table.md). Most rows differ from the measured configuration, so their
// errors are context, not validation; nothing is fitted to them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>

#include "experiments/pipeline.h"
#include "synth/scenario/scenario.h"

namespace tessera {
namespace {

std::string row(const YAML::Node& c) {
  const std::string name = c["scenario"].as<std::string>();
  synth::Scenario s =
      synth::load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/" + name + ".yaml");
  experiments::Outcome o = experiments::simulate_scenario(s, true, false);
  const double tokens = o.metrics.tokens_per_s_per_device;
  const double mfu = o.metrics.mfu;
  EXPECT_TRUE(std::isfinite(tokens) && tokens > 0.0) << name;
  std::string head = fmt::format("| {} | {:.0f} | {:.1f}% |", name, tokens, 100.0 * mfu);
  const YAML::Node m = c["measured"];
  if (m.IsNull()) {
    return head + fmt::format(" | | | {} | |\n", c["what"].as<std::string>());
  }
  const double mt = m["tokens_per_s_per_gpu"].as<double>();
  return head + fmt::format(" {:.1f} | {:.1f}% | {:+.1f}% | {}: {} | {} |\n", mt,
                            100.0 * m["mfu"].as<double>(), 100.0 * (tokens - mt) / mt,
                            c["what"].as<std::string>(), c["differs"].as<std::string>(),
                            c["source"].as<std::string>());
}

TEST(Validation, H100PublicMeasurements) {
  const YAML::Node doc =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/tests/validation/h100_public.yaml");
  std::string t =
      "| scenario | predicted tokens/s per GPU | predicted MFU | measured tokens/s per GPU | "
      "measured MFU | difference | closest public measurement: how it differs | source |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const YAML::Node& c : doc) {
    t += row(c);
  }
  std::cout << t;
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/h100_public_table.md") << t;
}

}  // namespace
}  // namespace tessera
