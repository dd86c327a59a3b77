// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/compute_yaml.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

#include "hwprofiles/link_spec_yaml.h"

namespace tessera::hw {

namespace {

using base::Dimension;
using base::YamlNode;

constexpr std::array<std::string_view, 8> kGemmKeys = {
    "tiles",   "compute_units",    "max_fraction", "k_half", "small_tile_exponent",
    "latency", "split_k_overhead", "sustained"};
constexpr std::array<std::string_view, 2> kSustainedKeys = {"bf16", "fp8"};
constexpr std::array<std::string_view, 3> kFractionKeys = {"bf16", "fp8", "fp32"};
constexpr std::array<std::string_view, 4> kAttentionKeys = {"forward", "backward", "seq_half",
                                                            "causal_seq_factor"};
constexpr std::array<std::string_view, 2> kPassKeys = {"forward", "backward"};
constexpr std::array<std::string_view, 3> kLaunchKeys = {"stream", "graph", "host"};

base::SimTime read_time(const YamlNode& node) {
  return base::from_seconds(node.as_quantity(Dimension::kTime, true));
}

bool parse_int(std::string_view text, int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && out >= 1 && out <= 4096;
}

GemmTile read_tile(const YamlNode& node) {
  std::string text = node.as_string();
  auto x = text.find('x');
  GemmTile t;
  if (x == std::string::npos || !parse_int(std::string_view(text).substr(0, x), t.m) ||
      !parse_int(std::string_view(text).substr(x + 1), t.n)) {
    node.fail(fmt::format("expected a CTA tile 'MxN' (1..4096 each), got '{}'", text),
              "e.g. \"128x256\"");
  }
  return t;
}

void read_tiles(const YamlNode& node, GemmModel& g) {
  if (!node.is_seq() || node.items().empty()) {
    node.fail("expected a list of CTA tiles, the library's main one first",
              "e.g. [\"128x256\", \"128x128\", \"64x128\"]");
  }
  g.tiles.clear();
  for (const YamlNode& item : node.items()) {
    g.tiles.push_back(read_tile(item));
  }
}

void read_fractions(const YamlNode& node, GemmModel& g) {
  node.check_keys(kFractionKeys);
  g.max_fraction = read_fraction(node.at("bf16"));
  if (auto f = node.find("fp8")) {
    g.max_fraction_fp8 = read_fraction(*f);
  }
  if (auto f = node.find("fp32")) {
    g.max_fraction_fp32 = read_fraction(*f);
  }
}

std::vector<AttentionModel::Point> read_points(const YamlNode& node) {
  node.expect_map();
  std::vector<AttentionModel::Point> points;
  for (const std::string& key : node.keys()) {
    AttentionModel::Point p;
    if (!parse_int(key, p.head_dim)) {
      throw base::InputError(node.key_loc(key),
                             fmt::format("expected a head dim (1..4096), got '{}'", key),
                             "map head dims to fractions, e.g. {64: 0.55, 128: 0.7}");
    }
    p.fraction = read_fraction(node.at(key));
    points.push_back(p);
  }
  if (points.empty()) {
    node.fail("expected at least one head dim", "e.g. {128: 0.7}");
  }
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return a.head_dim < b.head_dim; });
  return points;
}

}  // namespace

void read_gemm(const YamlNode& node, GemmModel& g) {
  node.check_keys(kGemmKeys);
  read_tiles(node.at("tiles"), g);
  g.compute_units = static_cast<int>(node.at("compute_units").as_int(1, 100000));
  read_fractions(node.at("max_fraction"), g);
  g.k_half = static_cast<double>(node.at("k_half").as_int(0, 1 << 20));
  double exponent = node.at("small_tile_exponent").as_double();
  if (exponent < 0.0 || exponent > 4.0) {
    node.at("small_tile_exponent").fail("expected a number in [0, 4]");
  }
  g.small_tile_exponent = exponent;
  g.latency = read_time(node.at("latency"));
  g.split_k_overhead = read_time(node.at("split_k_overhead"));
  if (auto v = node.find("sustained")) {
    v->check_keys(kSustainedKeys);
    if (auto f = v->find("bf16")) {
      g.sustained_bf16 = f->as_quantity(Dimension::kFlopRate);
    }
    if (auto f = v->find("fp8")) {
      g.sustained_fp8 = f->as_quantity(Dimension::kFlopRate);
    }
  }
}

void read_attention(const YamlNode& node, AttentionModel& a) {
  node.check_keys(kAttentionKeys);
  a.forward = read_points(node.at("forward"));
  a.backward = read_points(node.at("backward"));
  YamlNode half = node.at("seq_half");
  half.check_keys(kPassKeys);
  a.seq_half_forward = static_cast<double>(half.at("forward").as_int(0, 1 << 24));
  a.seq_half_backward = static_cast<double>(half.at("backward").as_int(0, 1 << 24));
  YamlNode factor = node.at("causal_seq_factor");
  a.causal_seq_factor = factor.as_double();
  if (a.causal_seq_factor < 1.0 || a.causal_seq_factor > 16.0) {
    factor.fail("expected a number in [1, 16]");
  }
}

void read_launch(const YamlNode& node, LaunchCosts& l) {
  node.check_keys(kLaunchKeys);
  l.stream = read_time(node.at("stream"));
  l.graph = read_time(node.at("graph"));
  l.host = read_time(node.at("host"));
}

}  // namespace tessera::hw
