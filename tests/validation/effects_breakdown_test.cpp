// SPDX-License-Identifier: Apache-2.0
// What each modelled effect (sim/models/effects.h) contributes to the validation table: every
// timing row of a100_megatron.yaml is simulated with all effects on, then with each effect
// switched off alone, and the table gives how far the effect moves the prediction
// ((with - without) / without). The table is pinned in tests/golden/effects_table.md, which
// the README shows; scripts/regen-golden.sh rewrites it. It explains the errors of the
// validation table; nothing is fitted to it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
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

// The validation rows with every effect on (passes[0]) and with each effect off alone
// (passes[1 + i]), on as many workers as the machine has cores (ctest reserves them: the
// test's PROCESSORS), each with its own copy of the document (yaml-cpp nodes are not safe to
// share between threads). The passes are independent and deterministic.
std::vector<std::vector<Row>> simulate_passes(const std::string& path) {
  const auto& effects = models::known_effects();
  std::vector<std::vector<Row>> passes(effects.size() + 1);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < passes.size(); i = next++) {
      models::Effects set;
      if (i > 0) {
        set.disable(effects[i - 1].name);
      }
      passes[i] = validation::megatron_rows(YAML::LoadFile(path), set, false);
    }
  };
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < std::min<std::size_t>(cores, passes.size()); ++w) {
    workers.emplace_back(work);
  }
  for (auto& w : workers) {
    w.join();
  }
  return passes;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Validation, EffectsBreakdown) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/validation/a100_megatron.yaml";
  const std::vector<std::vector<Row>> passes = simulate_passes(path);
  const std::vector<Row>& all = passes.front();
  std::string t = header();
  for (std::size_t i = 0; i < all.size(); ++i) {
    t += fmt::format("| {} | {} | {:.3g} | {:+.1f}% |", all[i].id, all[i].metric, all[i].predicted,
                     100.0 * all[i].error());
    for (std::size_t p = 1; p < passes.size(); ++p) {
      ASSERT_EQ(passes[p].size(), all.size());
      const double without = passes[p][i].predicted;
      const double moved = (all[i].predicted - without) / without;
      ASSERT_TRUE(std::isfinite(moved)) << all[i].id;
      t += fmt::format(" {:+.1f}% |", 100.0 * moved);
    }
    t += "\n";
  }
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/effects_table.md") << t;
  EXPECT_EQ(t, read_file(std::string(TESSERA_SOURCE_DIR) + "/tests/golden/effects_table.md"))
      << "the per-effect table moved; if that is meant, rewrite it with scripts/regen-golden.sh "
         "and say why in the commit";
}

}  // namespace
}  // namespace tessera
