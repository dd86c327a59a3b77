// SPDX-License-Identifier: Apache-2.0
// What each modelled effect (sim/models/effects.h) contributes to the validation table: every
// timing row of a100_megatron.yaml is simulated with all effects on, then with each effect
// switched off alone, and the table gives how far the effect moves the prediction
// ((with - without) / without). The README's per-effect table is this output. It explains the
// errors of the validation table; nothing is fitted to it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tests/validation/megatron_cases.h"

namespace tessera {
namespace {

using validation::Row;

std::string header() {
  std::string names = "| case | metric | predicted | error |";
  std::string rule = "|---|---|---|---|";
  for (const models::EffectInfo& e : models::known_effects()) {
    names += fmt::format(" {} |", e.name);
    rule += "---|";
  }
  return names + "\n" + rule + "\n";
}

TEST(Validation, EffectsBreakdown) {
  YAML::Node doc =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/tests/validation/a100_megatron.yaml");
  const std::vector<Row> all = validation::megatron_rows(doc, models::Effects{}, false);
  std::vector<std::vector<Row>> without;
  for (const models::EffectInfo& e : models::known_effects()) {
    models::Effects off;
    off.disable(e.name);
    without.push_back(validation::megatron_rows(doc, off, false));
    ASSERT_EQ(without.back().size(), all.size()) << e.name;
  }
  std::string t = header();
  for (std::size_t i = 0; i < all.size(); ++i) {
    t += fmt::format("| {} | {} | {:.3g} | {:+.1f}% |", all[i].id, all[i].metric, all[i].predicted,
                     100.0 * all[i].error());
    for (const auto& rows : without) {
      double moved = (all[i].predicted - rows[i].predicted) / rows[i].predicted;
      ASSERT_TRUE(std::isfinite(moved)) << all[i].id;
      t += fmt::format(" {:+.1f}% |", 100.0 * moved);
    }
    t += "\n";
  }
  std::cout << t;
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/effects_table.md") << t;
}

}  // namespace
}  // namespace tessera
