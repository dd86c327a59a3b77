// SPDX-License-Identifier: Apache-2.0
#include "base/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera::base {

namespace {

// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
// transpositions ("157b" is one step from "175b") each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) {
    d[i][0] = i;
  }
  for (std::size_t j = 0; j <= b.size(); ++j) {
    d[0][j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string join_quoted(std::span<const std::string_view> words) {
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : ", ") + std::string(w);
  }
  return out;
}

SourceLoc from_mark(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) {
    return SourceLoc{file, 0, 0};
  }
  return SourceLoc{file, mark.line + 1, mark.column + 1};
}

// Whether dotted path `inner` is `outer` or lies below it.
bool covers(const std::string& outer, const std::string& inner) {
  return inner == outer || outer.empty() || inner.starts_with(outer + ".");
}

std::vector<std::string> split_path(std::string_view assignment, const std::string& dotted) {
  std::vector<std::string> parts;
  std::stringstream ss(dotted);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) {
      throw InputError(fmt::format("--set {}: empty key in '{}'", assignment, dotted));
    }
    parts.push_back(part);
  }
  return parts;
}

std::string scalar_text(const YAML::Node& n) {
  return n.IsScalar() ? n.Scalar() : std::string();
}

}  // namespace

std::string nearest(std::string_view word, std::span<const std::string_view> candidates) {
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = std::string(c);
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string();
}

YamlNode::YamlNode(YAML::Node node, std::shared_ptr<Origin> origin, std::string path)
    : node_(std::move(node)), origin_(std::move(origin)), path_(std::move(path)) {}

YamlNode YamlNode::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw InputError(SourceLoc{path, 0, 0}, "cannot open file");
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return load_string(buf.str(), path);
}

YamlNode& YamlNode::operator=(const YamlNode& other) {
  if (this != &other) {
    node_.reset(other.node_);
    origin_ = other.origin_;
    path_ = other.path_;
  }
  return *this;
}

YamlNode& YamlNode::operator=(YamlNode&& other) noexcept {
  node_.reset(other.node_);
  origin_ = std::move(other.origin_);
  path_ = std::move(other.path_);
  return *this;
}

YamlNode YamlNode::load_string(const std::string& text, const std::string& name) {
  auto origin = std::make_shared<Origin>();
  origin->file = name;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(from_mark(name, e.mark), "malformed YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) {
    throw InputError(SourceLoc{name, 0, 0}, "the file is empty; expected a YAML mapping");
  }
  if (!root.IsMap()) {
    throw InputError(from_mark(name, root.Mark()), "expected a YAML mapping at the top level");
  }
  return YamlNode(root, std::move(origin), "");
}

YamlNode::ScalarExpander YamlNode::keep_under(std::string key) {
  return [key = std::move(key)](const YamlNode& scalar) {
    YAML::Node map(YAML::NodeType::Map);
    map[key] = scalar.raw();  // shares the scalar's data, so its position is kept
    return Expansion{map, ""};
  };
}

void YamlNode::apply_override(std::string_view assignment,
                              const std::map<std::string, ScalarExpander>& expand) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InputError(fmt::format("--set {}: expected key.path=value", assignment));
  }
  std::string dotted(assignment.substr(0, eq));
  std::string value(assignment.substr(eq + 1));
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--set {}: value is not valid YAML: {}", assignment, e.msg));
  }
  std::vector<std::string> parts = split_path(assignment, dotted);
  // yaml-cpp nodes are handles: walk with reset() so we never assign through an alias.
  YAML::Node cur;
  cur.reset(node_);
  std::string path;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    path += (path.empty() ? "" : ".") + parts[i];
    YAML::Node child = cur[parts[i]];
    if (child && child.IsScalar()) {  // e.g. `model: gpt3-175b` -> {preset: gpt3-175b}
      auto as = expand.find(path);
      if (as == expand.end()) {
        throw InputError(fmt::format("--set {}: '{}' is a value, not a mapping", assignment, path));
      }
      Expansion e = as->second(YamlNode(child, origin_, path));
      if (!e.file.empty()) {
        origin_->expansions[path] = e.file;
      }
      cur[parts[i]] = e.node;
    } else if (!child || !child.IsMap()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    }
    YAML::Node next = cur[parts[i]];
    cur.reset(next);
  }
  cur[parts.back()] = parsed;
  origin_->overrides[dotted] = "--set " + std::string(assignment);
}

std::vector<std::string> YamlNode::overrides_below() const {
  std::vector<std::string> out;
  for (const auto& [path, text] : origin_->overrides) {
    if (covers(path_, path)) {
      out.push_back(text.substr(std::string_view("--set ").size()));
    }
  }
  return out;
}

std::string YamlNode::file_of(const std::string& path) const {
  const std::string* best = &origin_->file;
  std::size_t best_len = 0;
  for (const auto& [prefix, file] : origin_->expansions) {
    if (covers(prefix, path) && prefix.size() >= best_len) {
      best = &file;
      best_len = prefix.size();
    }
  }
  return *best;
}

std::string YamlNode::file() const {
  return file_of(path_);
}

std::string YamlNode::find_beside(const std::string& relative) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path beside = fs::path(file()).parent_path() / relative;
  if (fs::path(relative).is_relative() && fs::is_regular_file(beside, ec)) {
    return beside.string();
  }
  return fs::is_regular_file(relative, ec) ? relative : std::string();
}

SourceLoc YamlNode::loc() const {
  for (const auto& [path, text] : origin_->overrides) {
    if (covers(path, path_)) {
      return SourceLoc{text, 0, 0};
    }
  }
  const YAML::Mark mark = node_.Mark();
  if (mark.is_null() || mark.line < 0) {  // a mapping or key a --set made on its way down
    for (const auto& [path, text] : origin_->overrides) {
      if (!path_.empty() && covers(path_, path)) {
        return SourceLoc{text, 0, 0};
      }
    }
  }
  return from_mark(file(), mark);
}

SourceLoc YamlNode::key_loc(std::string_view key) const {
  YAML::Node k = key_node(key);
  return k.IsScalar() ? YamlNode(k, origin_, child_path(key)).loc() : loc();
}

void YamlNode::fail(const std::string& message, const std::string& hint) const {
  std::string where = path_.empty() ? message : fmt::format("'{}': {}", path_, message);
  throw InputError(loc(), where, hint);
}

void YamlNode::adopt(std::string_view key, const YamlNode& value) {
  expect_map();
  node_[std::string(key)] = value.node_;
  origin_->expansions[child_path(key)] = value.file();
}

std::string YamlNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void YamlNode::expect_map() const {
  if (!node_.IsMap()) {
    fail("expected a mapping of keys to values");
  }
}

YAML::Node YamlNode::key_node(std::string_view key) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) {
      return it->first;
    }
  }
  return YAML::Node();
}

void YamlNode::check_keys(std::span<const std::string_view> allowed) const {
  expect_map();
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string& key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
      continue;
    }
    std::string guess = nearest(key, allowed);
    std::string hint = guess.empty() ? fmt::format("valid keys: {}", join_quoted(allowed))
                                     : fmt::format("did you mean '{}'? (valid keys: {})", guess,
                                                   join_quoted(allowed));
    YamlNode key_at(it->first, origin_, child_path(key));
    throw InputError(key_at.loc(),
                     fmt::format("unknown key '{}'{}", key,
                                 path_.empty() ? std::string() : " in '" + path_ + "'"),
                     hint);
  }
}

bool YamlNode::has(std::string_view key) const {
  return node_.IsMap() && static_cast<bool>(node_[std::string(key)]);
}

std::optional<YamlNode> YamlNode::find(std::string_view key) const {
  expect_map();
  YAML::Node child = node_[std::string(key)];
  if (!child) {
    return std::nullopt;
  }
  return YamlNode(child, origin_, child_path(key));
}

YamlNode YamlNode::at(std::string_view key) const {
  auto child = find(key);
  if (!child) {
    fail(fmt::format("missing required key '{}'", key));
  }
  return *child;
}

std::vector<std::string> YamlNode::keys() const {
  expect_map();
  std::vector<std::string> out;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    out.push_back(it->first.Scalar());
  }
  return out;
}

std::vector<YamlNode> YamlNode::items() const {
  if (!node_.IsSequence()) {
    fail("expected a list");
  }
  std::vector<YamlNode> out;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    out.emplace_back(node_[i], origin_, fmt::format("{}[{}]", path_, i));
  }
  return out;
}

std::string YamlNode::as_string() const {
  if (!node_.IsScalar()) {
    fail("expected a single value");
  }
  return node_.Scalar();
}

std::int64_t YamlNode::as_int(std::int64_t min, std::int64_t max) const {
  std::string text = as_string();
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    fail(fmt::format("expected an integer, got '{}'", text));
  }
  if (value < min || value > max) {
    if (max == INT64_MAX) {
      fail(fmt::format("expected an integer >= {}, got {}", min, value));
    }
    fail(fmt::format("expected an integer in [{}, {}], got {}", min, max, value));
  }
  return value;
}

double YamlNode::as_double() const {
  std::string text = as_string();
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    fail(fmt::format("expected a number, got '{}'", text));
  }
  return value;
}

bool YamlNode::as_bool() const {
  std::string text = as_string();
  bool value = false;
  if (YAML::convert<bool>::decode(node_, value)) {
    return value;
  }
  fail(fmt::format("expected true or false, got '{}'", text));
}

std::string YamlNode::as_choice(std::span<const std::string_view> choices) const {
  std::string text = as_string();
  if (std::find(choices.begin(), choices.end(), text) != choices.end()) {
    return text;
  }
  std::string guess = nearest(text, choices);
  std::string hint = fmt::format("expected one of: {}", join_quoted(choices));
  if (!guess.empty()) {
    hint = fmt::format("did you mean '{}'? ({})", guess, hint);
  }
  fail(fmt::format("unknown value '{}'", text), hint);
}

double YamlNode::as_quantity(Dimension d, bool allow_zero) const {
  std::string text = scalar_text(node_);
  if (!node_.IsScalar()) {
    fail(fmt::format("expected {} with a unit, e.g. {}", dimension_name(d), dimension_example(d)));
  }
  auto value = parse_quantity(text, d);
  if (!value) {
    fail(fmt::format("expected {} with a unit, e.g. {}, got '{}'", dimension_name(d),
                     dimension_example(d), text));
  }
  if (*value < 0.0 || (!allow_zero && *value == 0.0)) {
    fail(fmt::format("expected a {} value, got '{}'", allow_zero ? "non-negative" : "positive",
                     text));
  }
  return *value;
}

}  // namespace tessera::base
