// SPDX-License-Identifier: Apache-2.0
// Reading the values of a runs file, which are often annotated by whoever collected them
// ("8192 [U: default toml]", "not stated (1 implied)", "'-' in table"): a number is taken with
// its annotation, a value that says it is not known is unknown, anything else is an error.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "experiments/runs/translate.h"

namespace tessera::experiments::runs {

using base::YamlNode;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(std::string_view text, std::string_view word) {
  return lower(text).find(lower(word)) != std::string::npos;
}

std::string text_of(const YamlNode& n) {
  if (n.is_null()) {
    return "";
  }
  if (!n.is_scalar()) {
    n.fail("expected a single value");
  }
  return n.as_string();
}

bool unknown(const YamlNode& n) {
  if (n.is_null()) {
    return true;
  }
  if (!n.is_scalar()) {
    return false;
  }
  const std::string t = lower(n.as_string());
  constexpr std::array<std::string_view, 5> kMarks = {"not stated", "n/a", "unknown", "'-'", "?"};
  // "[U] not in table": the collector's flag with no value before it.
  return t.empty() || t == "-" || t.starts_with("[u]") ||
         std::any_of(kMarks.begin(), kMarks.end(), [&](auto m) {
           return t.starts_with(m) || t.find(std::string(m) + " ") != std::string::npos;
         });
}

namespace {

// The number a text starts with, and whether what follows is an annotation (nothing, or a
// space and more text).
template <typename T>
std::optional<T> leading(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || (ptr != end && *ptr != ' ')) {
    return std::nullopt;
  }
  return value;
}

// "not stated (1 implied)": the number a parenthesis implies.
std::optional<std::int64_t> implied(const std::string& text) {
  auto open = text.find('(');
  if (open == std::string::npos || !contains(text, "implied")) {
    return std::nullopt;
  }
  return leading<std::int64_t>(text.substr(open + 1));
}

}  // namespace

std::optional<std::int64_t> lenient_int(const YamlNode& n, std::int64_t min, std::int64_t max) {
  std::optional<std::int64_t> v;
  const std::string text = text_of(n);
  if (unknown(n)) {
    v = implied(text);
    if (!v) {
      return std::nullopt;
    }
  } else {
    v = leading<std::int64_t>(text);
  }
  if (!v || *v < min || *v > max) {
    n.fail(fmt::format("expected an integer in [{}, {}], got '{}'", min, max, text),
           "a number may carry a note after it (\"8192 [U]\"); write \"not stated\" when unknown");
  }
  return v;
}

std::optional<double> lenient_number(const YamlNode& n) {
  if (unknown(n)) {
    return std::nullopt;
  }
  const std::string text = text_of(n);
  auto v = leading<double>(text);
  if (!v || !(*v > 0.0) || *v > 1e30) {
    n.fail(fmt::format("expected a positive number, got '{}'", text));
  }
  return v;
}

std::optional<bool> lenient_bool(const YamlNode& n) {
  if (unknown(n)) {
    return std::nullopt;
  }
  const std::string t = lower(text_of(n));
  if (t.starts_with("true") || t.starts_with("yes")) {
    return true;
  }
  if (t.starts_with("false") || t.starts_with("no")) {
    return false;
  }
  if (t.starts_with("default (true")) {
    return true;
  }
  if (t.starts_with("default (false")) {
    return false;
  }
  n.fail(fmt::format("expected true or false, got '{}'", text_of(n)));
}

}  // namespace tessera::experiments::runs
