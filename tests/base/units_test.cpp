// SPDX-License-Identifier: Apache-2.0
#include "base/units.h"

#include <gtest/gtest.h>

namespace tessera::base {
namespace {

TEST(Units, ParsesSizesWithDecimalAndBinaryPrefixes) {
  EXPECT_DOUBLE_EQ(*parse_quantity("80 GiB", Dimension::kBytes), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_quantity("80 GB", Dimension::kBytes), 80e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("  1.5MiB ", Dimension::kBytes), 1.5 * 1048576.0);
}

TEST(Units, ParsesBandwidthInBytesAndBits) {
  EXPECT_DOUBLE_EQ(*parse_quantity("900 GB/s", Dimension::kBandwidth), 900e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("400 Gb/s", Dimension::kBandwidth), 50e9);
}

TEST(Units, ParsesTimeAndRates) {
  EXPECT_DOUBLE_EQ(*parse_quantity("1.5 us", Dimension::kTime), 1.5e-6);
  EXPECT_DOUBLE_EQ(*parse_quantity("989.4 TFLOP/s", Dimension::kFlopRate), 989.4e12);
}

TEST(Units, RejectsMissingOrWrongUnits) {
  EXPECT_FALSE(parse_quantity("900", Dimension::kBandwidth));
  EXPECT_FALSE(parse_quantity("900 GB", Dimension::kBandwidth));
  EXPECT_FALSE(parse_quantity("fast", Dimension::kTime));
  EXPECT_FALSE(parse_quantity("1.5 parsecs", Dimension::kTime));
}

TEST(Units, TimeIsIntegerPicoseconds) {
  EXPECT_EQ(from_us(1.5), 1'500'000);
  EXPECT_EQ(from_seconds(2.0), 2 * kPsPerSecond);
  EXPECT_DOUBLE_EQ(to_seconds(from_seconds(0.125)), 0.125);
}

}  // namespace
}  // namespace tessera::base
