// SPDX-License-Identifier: Apache-2.0
// validate() on scenarios built in code: each violation names the scenario key that breaks
// it, whether or not the scenario came from a file.
#include "synth/scenario/validate.h"

#include <gtest/gtest.h>

#include "tests/input_error.h"
#include "tests/synth/synth_fixtures.h"

namespace tessera::synth {
namespace {

using tessera::testing::error_of;

TEST(Validate, AValidScenarioHasNoViolations) {
  Scenario s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  EXPECT_TRUE(validate(s).empty());
  EXPECT_NO_THROW(check_or_throw(s));
}

TEST(Validate, ViolationsNameTheirKey) {
  Scenario s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.parallel.tp = 3;
  s.cluster.devices = 12;
  auto v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().key, "parallelism.tp");
  EXPECT_EQ(v.front().message, "tp=3 does not divide model.heads=4");
  EXPECT_EQ(error_of([&] { check_or_throw(s); }),
            "error: 'parallelism.tp': tp=3 does not divide model.heads=4");
}

TEST(Validate, DevicesBatchAndSchedule) {
  Scenario s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.cluster.devices = 16;
  EXPECT_EQ(validate(s).front().key, "cluster.devices");
  s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.training.global_batch = 15;
  EXPECT_EQ(validate(s).front().key, "training.global_batch");
  s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.schedule.kind = ScheduleKind::kDualPipeV;  // 8 microbatches on pp=2 is enough
  EXPECT_TRUE(validate(s).empty());
  s.training.global_batch = 4;  // 2 microbatches per replica: fewer than 2*pp
  ASSERT_FALSE(validate(s).empty());
  EXPECT_EQ(validate(s).front().key, "schedule");
  s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.parallel.sp = true;
  s.parallel.tp = 1;
  s.parallel.dp = 4;
  EXPECT_EQ(validate(s).front().key, "parallelism.sp");
}

TEST(Validate, NonPositiveCountsAreViolationsNotCrashes) {
  Scenario s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.model.heads = 0;
  EXPECT_EQ(validate(s).front().key, "model.heads");
  s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.parallel.dp = 0;  // not resolved: the devices must leave a dp
  s.cluster.devices = 10;
  EXPECT_EQ(devices_left_dp(s), 0);
  EXPECT_EQ(validate(s).front().message, "devices=10 is not a multiple of tp*pp=4");
}

TEST(Validate, EncoderPlacementWithoutAnEncoder) {
  Scenario s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.schedule.encoder = EncoderPlacement::kTranspose;
  auto v = validate(s);
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v.front().key, "schedule");
  EXPECT_NE(v.front().hint.find("encoder:"), std::string::npos);
}

TEST(Validate, EncoderStagesNeedAFlatSkeleton) {
  Scenario s = testing::gpt_scenario(4, 256, 4, 2, 2, 2);
  s.encoder = *encoder_preset("qwen2-vl-vit");
  s.encoder.present = true;
  s.schedule.encoder = EncoderPlacement::kStages;
  s.schedule.kind = ScheduleKind::kInterleaved;
  s.schedule.chunks = 2;
  auto v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().key, "schedule.kind");
  EXPECT_EQ(v.front().message,
            "the encoder as its own pipeline stages needs a flat skeleton (gpipe, 1f1b or "
            "zb-h1), not interleaved");
  s.schedule.kind = ScheduleKind::k1F1B;
  s.schedule.encoder_stages = 2;  // all of pp=2
  v = validate(s);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().key, "schedule.encoder_stages");
  EXPECT_EQ(v.front().alt_key, "schedule.regions[0].stages");
}

}  // namespace
}  // namespace tessera::synth
