// SPDX-License-Identifier: Apache-2.0
// Strict YAML reading: every value keeps its file:line:col, unknown keys are errors with a
// "did you mean" hint, quantities must carry units. Wraps yaml-cpp nodes.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
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
    // dotted path -> the file a scalar there was expanded from (its nodes keep their marks)
    std::map<std::string, std::string> expansions;
  };
  // What a scalar stands for when `--set` reaches below it: the mapping that replaces it and
  // the file that mapping was read from ("" when it is built in place).
  struct Expansion {
    YAML::Node node;
    std::string file;
  };
  using ScalarExpander = std::function<Expansion(const YamlNode& scalar)>;
  // The expander that keeps the scalar under `key`: `model: x` -> {preset: x}.
  static ScalarExpander keep_under(std::string key);

  YamlNode(YAML::Node node, std::shared_ptr<Origin> origin, std::string path);
  YamlNode(const YamlNode&) = default;
  YamlNode(YamlNode&&) = default;
  // Assignment rebinds this handle to the other node. (A YAML::Node assigned to would instead
  // replace the content of the node it refers to, inside the document.)
  YamlNode& operator=(const YamlNode& other);
  YamlNode& operator=(YamlNode&& other) noexcept;
  ~YamlNode() = default;

  // Throws InputError for a missing file, an empty file, or malformed YAML.
  static YamlNode load_file(const std::string& path);
  static YamlNode load_string(const std::string& text, const std::string& name);

  // `--set a.b.c=value`: replaces (or creates) that key before the document is read. Setting a
  // key below a scalar (`model: gpt3-175b`) turns the scalar into the mapping the expander for
  // that path gives ({preset: gpt3-175b}, or a preset file's contents); other scalars are an
  // error. Errors in the assignment itself, and later errors at keys it created, name the --set.
  void apply_override(std::string_view assignment,
                      const std::map<std::string, ScalarExpander>& expand = {});
  // The "key=value" assignments of the --set overrides at or below this node, in key order.
  [[nodiscard]] std::vector<std::string> overrides_below() const;
  // A path written in this node's file: a relative one is looked up beside the file, then as
  // given (relative to the working directory); "" when it exists nowhere.
  [[nodiscard]] std::string find_beside(const std::string& relative) const;

  [[nodiscard]] SourceLoc loc() const;
  [[nodiscard]] const std::string& path() const { return path_; }
  // The file this node was read from: the scenario's, or a preset's a --set expanded.
  [[nodiscard]] std::string file() const;
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
  // Where the key itself (not its value) is written; the map's position when it is absent.
  [[nodiscard]] SourceLoc key_loc(std::string_view key) const;
  // Puts `value`, a node of another document, under `key` of this mapping (in place of what
  // is there): it keeps its own file:line:col, which errors about it then name.
  void adopt(std::string_view key, const YamlNode& value);

  // Sequences.
  [[nodiscard]] std::vector<YamlNode> items() const;

  // Scalars.
  [[nodiscard]] std::string as_string() const;
  [[nodiscard]] std::int64_t as_int(std::int64_t min = INT64_MIN,
                                    std::int64_t max = INT64_MAX) const;
  [[nodiscard]] double as_double() const;
  [[nodiscard]] bool as_bool() const;  // every spelling yaml-cpp takes: true, True, TRUE, yes, on
  [[nodiscard]] std::string as_choice(std::span<const std::string_view> choices) const;
  // A physical quantity with a unit; `allow_zero` admits "0 us" and the like.
  [[nodiscard]] double as_quantity(Dimension d, bool allow_zero = false) const;

  [[noreturn]] void fail(const std::string& message, const std::string& hint = "") const;

 private:
  [[nodiscard]] std::string child_path(std::string_view key) const;
  [[nodiscard]] std::string file_of(const std::string& path) const;
  [[nodiscard]] YAML::Node key_node(std::string_view key) const;

  YAML::Node node_;
  std::shared_ptr<Origin> origin_;
  std::string path_;
};

}  // namespace tessera::base
