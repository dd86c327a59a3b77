// SPDX-License-Identifier: Apache-2.0
#include "base/yaml_reader.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>

#include "tests/input_error.h"

namespace tessera::base {
namespace {

using testing::error_of;

TEST(YamlReader, UnknownKeyNamesPositionAndSuggests) {
  auto root = YamlNode::load_string("model:\n  layers: 2\n  hiden: 256\n", "x.yaml");
  constexpr std::array<std::string_view, 2> kKeys = {"layers", "hidden"};
  EXPECT_EQ(error_of([&] { root.at("model").check_keys(kKeys); }),
            "x.yaml:3:3: error: unknown key 'hiden' in 'model'; did you mean 'hidden'? "
            "(valid keys: layers, hidden)");
}

TEST(YamlReader, IntegersAreCheckedWithPosition) {
  auto root = YamlNode::load_string("a: 2\nb: two\nc: -1\n", "x.yaml");
  EXPECT_EQ(root.at("a").as_int(1), 2);
  EXPECT_EQ(error_of([&] { (void)root.at("b").as_int(1); }),
            "x.yaml:2:4: error: 'b': expected an integer, got 'two'");
  EXPECT_EQ(error_of([&] { (void)root.at("c").as_int(1); }),
            "x.yaml:3:4: error: 'c': expected an integer >= 1, got -1");
}

TEST(YamlReader, QuantitiesNeedUnitsAndPositiveValues) {
  auto root = YamlNode::load_string("bw: 900 GB/s\nbad: 900\nneg: -5 GB/s\n", "x.yaml");
  EXPECT_DOUBLE_EQ(root.at("bw").as_quantity(Dimension::kBandwidth), 900e9);
  EXPECT_NE(error_of([&] {
              (void)root.at("bad").as_quantity(Dimension::kBandwidth);
            }).find("expected a bandwidth with a unit"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              (void)root.at("neg").as_quantity(Dimension::kBandwidth);
            }).find("expected a positive value"),
            std::string::npos);
}

TEST(YamlReader, EmptyAndMalformedFilesAreInputErrors) {
  EXPECT_EQ(error_of([] { (void)YamlNode::load_string("", "e.yaml"); }),
            "e.yaml: error: the file is empty; expected a YAML mapping");
  EXPECT_NE(error_of([] { (void)YamlNode::load_string("a: [1, 2\n", "m.yaml"); }).find("m.yaml:"),
            std::string::npos);
}

TEST(YamlReader, OverridesReplaceValuesAndReportTheirOrigin) {
  auto root = YamlNode::load_string("model:\n  layers: 2\n", "x.yaml");
  root.apply_override("model.layers=4");
  root.apply_override("training.seq_len=x");
  EXPECT_EQ(root.at("model").at("layers").as_int(), 4);
  EXPECT_EQ(error_of([&] { (void)root.at("training").at("seq_len").as_int(); }),
            "--set training.seq_len=x: error: 'training.seq_len': expected an integer, got 'x'");
}

TEST(YamlReader, OverridesBelowAScalarKeepItUnderTheNamedKey) {
  auto root = YamlNode::load_string("model: gpt3-175b\nname: x\n", "x.yaml");
  const std::map<std::string, YamlNode::ScalarExpander> expand = {
      {"model", YamlNode::keep_under("preset")}};
  root.apply_override("model.layers=8", expand);
  EXPECT_EQ(root.at("model").at("preset").as_string(), "gpt3-175b");
  EXPECT_EQ(root.at("model").at("layers").as_int(), 8);
  // The kept scalar is still reported where the file wrote it.
  EXPECT_EQ(root.at("model").at("preset").loc().str(), "x.yaml:1:8");
  EXPECT_EQ(error_of([&] { root.apply_override("name.first=y", expand); }),
            "error: --set name.first=y: 'name' is a value, not a mapping");
}

TEST(YamlReader, KeysASetCreatedNameTheSet) {
  auto root = YamlNode::load_string("model:\n  layers: 2\n", "x.yaml");
  root.apply_override("foo.bar.baz=1");
  constexpr std::array<std::string_view, 2> kKeys = {"model", "food"};
  EXPECT_EQ(error_of([&] { root.check_keys(kKeys); }),
            "--set foo.bar.baz=1: error: unknown key 'foo'; did you mean 'food'? (valid keys: "
            "model, food)");
  EXPECT_EQ(root.overrides_below(), std::vector<std::string>{"foo.bar.baz=1"});
  EXPECT_TRUE(root.at("model").overrides_below().empty());
}

TEST(YamlReader, ExpandedScalarsReportTheirOwnFile) {
  auto root = YamlNode::load_string("cluster:\n  hardware: gpu\n", "x.yaml");
  auto gpu = [](const YamlNode&) {
    return YamlNode::Expansion{YAML::Load("name: gpu\nlinks:\n  bw: 1\n"), "gpu.yaml"};
  };
  root.apply_override("cluster.hardware.links.bw=2", {{"cluster.hardware", gpu}});
  YamlNode hw = root.at("cluster").at("hardware");
  EXPECT_EQ(hw.file(), "gpu.yaml");
  EXPECT_EQ(hw.at("name").loc().str(), "gpu.yaml:1:7");
  EXPECT_EQ(hw.at("links").at("bw").loc().str(), "--set cluster.hardware.links.bw=2");
  EXPECT_EQ(root.at("cluster").file(), "x.yaml");
  EXPECT_EQ(hw.overrides_below(), std::vector<std::string>{"cluster.hardware.links.bw=2"});
}

TEST(YamlReader, BooleansTakeEveryYamlSpelling) {
  auto root = YamlNode::load_string(
      "a: True\nb: TRUE\nc: true\nd: yes\ne: On\nf: False\ng: FALSE\nh: no\ni: off\nj: 1\n",
      "x.yaml");
  for (std::string_view key : {"a", "b", "c", "d", "e"}) {
    EXPECT_TRUE(root.at(key).as_bool()) << key;
  }
  for (std::string_view key : {"f", "g", "h", "i"}) {
    EXPECT_FALSE(root.at(key).as_bool()) << key;
  }
  EXPECT_EQ(error_of([&] { (void)root.at("j").as_bool(); }),
            "x.yaml:10:4: error: 'j': expected true or false, got '1'");
}

TEST(YamlReader, ChoicesSuggestTheNearestValue) {
  auto root = YamlNode::load_string("schedule: 1f1c\n", "x.yaml");
  constexpr std::array<std::string_view, 2> kChoices = {"gpipe", "1f1b"};
  EXPECT_EQ(error_of([&] { (void)root.at("schedule").as_choice(kChoices); }),
            "x.yaml:1:11: error: 'schedule': unknown value '1f1c'; did you mean '1f1b'? "
            "(expected one of: gpipe, 1f1b)");
}

}  // namespace
}  // namespace tessera::base
