// SPDX-License-Identifier: Apache-2.0
// The profile parameter table (hwprofiles/parameters.h): every key once, every number with
// bounds that hold for the shipped profiles and a written form that reads back the same, and
// `extends:` changing only the keys a profile gives.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "hwprofiles/parameters.h"
#include "tests/input_error.h"
#include "tests/temp_dir.h"

namespace tessera::hw {
namespace {

using base::YamlNode;
using testing::error_of;
using testing::TempDir;

TEST(ProfileParameters, EveryKeyOnceWithMeaningAndAccess) {
  std::set<std::string_view> paths;
  for (const Parameter& p : profile_parameters()) {
    EXPECT_TRUE(paths.insert(p.path).second) << p.path;
    EXPECT_FALSE(p.doc.empty()) << p.path;
    if (p.kind == Parameter::Kind::kCustom) {
      EXPECT_TRUE(p.read != nullptr && p.write != nullptr) << p.path;
    } else {
      EXPECT_TRUE(p.get != nullptr && p.set != nullptr) << p.path;
      EXPECT_LE(p.lo, p.hi) << p.path;
    }
  }
  EXPECT_NE(find_parameter("under_load.math"), nullptr);
  EXPECT_TRUE(find_parameter("under_load.math")->fitted);
  EXPECT_EQ(find_parameter("no.such.key"), nullptr);
}

// Whether the optional block `p` belongs to (if any) is on in `profile`.
bool group_on(const Parameter& p, const Profile& profile) {
  for (const ParameterGroup& g : parameter_groups()) {
    if (g.path == p.group) {
      return g.enabled(profile);
    }
  }
  return true;
}

// Every shipped profile's numbers sit inside their bounds, and their written form reads back.
TEST(ProfileParameters, ShippedValuesAreInBoundsAndRoundTrip) {
  for (const std::string& name : profile_names()) {
    SCOPED_TRACE(name);
    const Profile profile = load_profile(name);
    for (const Parameter& p : profile_parameters()) {
      if (p.kind == Parameter::Kind::kCustom || !group_on(p, profile)) {
        continue;
      }
      const double v = p.get(profile);
      if (p.kind != Parameter::Kind::kFraction || v > 0.0) {
        EXPECT_TRUE(v >= p.lo && v <= p.hi) << p.path << " = " << v;
      }
      const std::string text = format_parameter(p, v);
      const YamlNode n = YamlNode::load_string("v: " + text + "\n", "v.yaml").at("v");
      const double back = p.kind == Parameter::Kind::kQuantity ? n.as_quantity(p.unit, true)
                          : p.kind == Parameter::Kind::kFlag   ? (n.as_bool() ? 1.0 : 0.0)
                                                               : n.as_double();
      EXPECT_NEAR(back, v, 1e-8 * std::abs(v)) << p.path << " written as " << text;
    }
  }
}

TEST(ProfileParameters, ExtendsChangesOnlyTheKeysItGives) {
  TempDir dir;
  const std::string path = dir.write("my-h100.yaml",
                                     "name: my-h100\n"
                                     "extends: h100-sxm\n"
                                     "description: \"our H100s\"\n"
                                     "under_load: {math: 0.9, step: \"20 ms\"}\n"
                                     "scale_out: {efficiency: 0.8}\n");
  const Profile base = load_profile("h100-sxm");
  const Profile p = load_profile(path);
  EXPECT_EQ(p.name, "my-h100");
  EXPECT_EQ(p.description, "our H100s");
  EXPECT_DOUBLE_EQ(p.under_load.math, 0.9);
  EXPECT_EQ(p.under_load.step, base::from_seconds(0.02));
  EXPECT_DOUBLE_EQ(p.scale_out.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(p.scale_out.bandwidth, base.scale_out.bandwidth);
  EXPECT_DOUBLE_EQ(p.peak(base::DType::kFP8), base.peak(base::DType::kFP8));
  EXPECT_TRUE(p.collective.nvls.enabled);
  EXPECT_EQ(p.device_names, base.device_names);
  // A profile extending that one, by its path beside it.
  const std::string two = dir.write("two.yaml", "extends: my-h100.yaml\nunder_load: {math: 0.8}\n");
  const Profile q = load_profile(two);
  EXPECT_DOUBLE_EQ(q.under_load.math, 0.8);
  EXPECT_DOUBLE_EQ(q.scale_out.efficiency, 0.8);
  EXPECT_EQ(q.name, "two");
}

TEST(ProfileParameters, ExtendsErrors) {
  TempDir dir;
  const std::string name =
      error_of([&] { (void)load_profile(dir.write("a.yaml", "extends: h100-sxn\n")); });
  EXPECT_NE(name.find("a.yaml:1:10: error: unknown hardware profile 'h100-sxn'; did you mean "
                      "'h100-sxm'?"),
            std::string::npos)
      << name;
  dir.write("x.yaml", "extends: y.yaml\n");
  const std::string cycle =
      error_of([&] { (void)load_profile(dir.write("y.yaml", "extends: x.yaml\n")); });
  EXPECT_NE(cycle.find("more than 8 deep"), std::string::npos) << cycle;
  const std::string bounds = error_of([&] {
    (void)load_profile(dir.write("b.yaml", "extends: h100-sxm\nunder_load: {math: 0.2}\n"));
  });
  EXPECT_NE(bounds.find("b.yaml:2:20: error: 'under_load.math': expected a number in [0.5, 1]"),
            std::string::npos)
      << bounds;
  const std::string step = error_of([&] {
    (void)load_profile(dir.write("c.yaml", "extends: h100-sxm\nunder_load: {step: \"5 s\"}\n"));
  });
  EXPECT_NE(step.find("expected a time in [0.00 us, 2.000 s]"), std::string::npos) << step;
  const std::string unknown = error_of([&] {
    (void)load_profile(dir.write("d.yaml", "extends: h100-sxm\nunder_load: {maths: 0.9}\n"));
  });
  EXPECT_NE(unknown.find("did you mean 'math'?"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace tessera::hw
