// SPDX-License-Identifier: Apache-2.0
// One workload under several schedules: rows in order, speedups against the first, a row
// with a reason for a schedule that cannot run, and the files compare --out writes.
#include "experiments/compare.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/compare_files.h"
#include "experiments/schedule_spec.h"
#include "tests/temp_dir.h"

namespace tessera::experiments {
namespace {

synth::Scenario tiny() {
  return synth::load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/tiny.yaml", {});
}

TEST(CompareSchedules, RowsInOrderWithSpeedups) {
  std::vector<std::string> seen;
  std::vector<Row> rows =
      compare_schedules(tiny(), {"1f1b", "gpipe", "transpose"}, false,
                        [&](const std::string& spec, const Outcome&) { seen.push_back(spec); });
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].schedule, "1f1b");
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_GT(rows[1].step_s, 0.0);
  EXPECT_DOUBLE_EQ(rows[1].speedup, rows[0].step_s / rows[1].step_s);
  EXPECT_EQ(rows[2].skipped, "the scenario has no encoder to place");
  EXPECT_EQ(rows[2].speedup, 0.0);
  EXPECT_EQ(seen, (std::vector<std::string>{"1f1b", "gpipe"}));
}

// The pipeline is the one `tessera run` takes: the same step time.
TEST(CompareSchedules, MatchesTheRunPipeline) {
  synth::Scenario s = tiny();
  std::vector<Row> rows = compare_schedules(s, {"1f1b"}, false, {});
  s.schedule = parse_schedule("1f1b");
  EXPECT_DOUBLE_EQ(rows[0].step_s, simulate_scenario(s, true, false).stats.step_time_s);
}

TEST(CompareFiles, TablesAndReports) {
  testing::TempDir dir;
  std::string out = dir.path();
  std::vector<Row> rows = compare_schedules(tiny(), {"1f1b", "zb-h1"}, true,
                                            [&](const std::string& spec, const Outcome& o) {
                                              write_reports(out, o, "-" + file_safe(spec));
                                            });
  write_compare_tables(out, rows);
  for (const char* f : {"compare.csv", "compare.json", "summary-1f1b.json",
                        "timeline-zb-h1.json.gz", "ranks-zb-h1.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / f)) << f;
  }
  std::ifstream csv(out + "/compare.csv");
  std::stringstream text;
  text << csv.rdbuf();
  EXPECT_NE(text.str().find("\"zb-h1\","), std::string::npos) << text.str();
  // The configuration travels as fields (tiny: TP2 PP2 DP2, micro-batch 2, 8 x h100-sxm).
  EXPECT_NE(text.str().find(",skipped,tp,pp,dp,sp,micro_batch,global_batch,seq_len,recompute,"
                            "attention,devices,hardware,topology\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(",\"\",2,2,2,0,2,8,128,\"none\",\"flash\",8,\"h100-sxm\","
                            "\"single-node\"\n"),
            std::string::npos)
      << text.str();
}

}  // namespace
}  // namespace tessera::experiments
