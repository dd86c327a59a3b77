// SPDX-License-Identifier: Apache-2.0
// Strict YAML reading: every value keeps its file:line:col, unknown keys are errors with a
// "did you mean" hint, quantities must carry units. Wraps yaml-cpp nodes.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/units.h"

namespace tessera::base {

// The closest candidate by edit distance, or "" when nothing is close enough to suggest.
std::string nearest(std::string_view word, std::span<const std::string_view> candidates);

// One node of a loaded document plus where it came from.
// Contract: every accessor that rejects the value throws InputError at this node's position.
class YamlNode {
 public:
  struct Origin {
    std::string file;
    std::map<std::string, std::string> overrides;  // dotted path -> "--set path=value"
  };

  YamlNode(YAML::Node node, std::shared_ptr<Origin> origin, std::string path);

  // Throws InputError for a missing file, an empty file, or malformed YAML.
  static YamlNode load_file(const std::string& path);
  static YamlNode load_string(const std::string& text, const std::string& name);

  // `--set a.b.c=value`: replaces (or creates) that key before the document is read. Setting a
  // key below a scalar (`model: gpt3-175b`) turns the scalar into a mapping that keeps it under
  // the key `scalar_as` names for that path ({preset: gpt3-175b}); other scalars are an error.
  void apply_override(std::string_view assignment,
                      const std::map<std::string, std::string>& scalar_as = {});

  [[nodiscard]] SourceLoc loc() const;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& file() const { return origin_->file; }
  [[nodiscard]] bool is_map() const { return node_.IsMap(); }
  [[nodiscard]] bool is_seq() const { return node_.IsSequence(); }
  [[nodiscard]] bool is_scalar() const { return node_.IsScalar(); }
  [[nodiscard]] bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }
  [[nodiscard]] const YAML::Node& raw() const { return node_; }

  // Maps.
  void expect_map() const;
  void check_keys(std::span<const std::string_view> allowed) const;
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] YamlNode at(std::string_view key) const;  // required key
  [[nodiscard]] std::optional<YamlNode> find(std::string_view key) const;
  [[nodiscard]] std::vector<std::string> keys() const;

  // Sequences.
  [[nodiscard]] std::vector<YamlNode> items() const;

  // Scalars.
  [[nodiscard]] std::string as_string() const;
  [[nodiscard]] std::int64_t as_int(std::int64_t min = INT64_MIN,
                                    std::int64_t max = INT64_MAX) const;
  [[nodiscard]] double as_double() const;
  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] std::string as_choice(std::span<const std::string_view> choices) const;
  // A physical quantity with a unit; `allow_zero` admits "0 us" and the like.
  [[nodiscard]] double as_quantity(Dimension d, bool allow_zero = false) const;

  [[noreturn]] void fail(const std::string& message, const std::string& hint = "") const;

 private:
  [[nodiscard]] std::string child_path(std::string_view key) const;
  [[nodiscard]] YAML::Node key_node(std::string_view key) const;

  YAML::Node node_;
  std::shared_ptr<Origin> origin_;
  std::string path_;
};

}  // namespace tessera::base
