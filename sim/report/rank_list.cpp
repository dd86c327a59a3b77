// SPDX-License-Identifier: Apache-2.0
#include "sim/report/rank_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "base/error.h"

namespace tessera::sim::report {

namespace {

constexpr std::int32_t kMaxRank = 1 << 24;  // bounds what a typo can ask for

std::int32_t parse_rank(std::string_view item, std::string_view whole) {
  std::int32_t v = 0;
  const char* end = item.data() + item.size();
  auto [p, ec] = std::from_chars(item.data(), end, v);
  if (item.empty() || ec != std::errc() || p != end || v < 0 || v > kMaxRank) {
    throw base::InputError(
        fmt::format("rank list '{}': '{}' is not a rank (a number >= 0)", whole, item));
  }
  return v;
}

void add_item(std::string_view item, std::string_view whole, std::vector<std::int32_t>& out) {
  std::size_t dash = item.find('-');
  if (dash == std::string_view::npos) {
    out.push_back(parse_rank(item, whole));
    return;
  }
  std::int32_t lo = parse_rank(item.substr(0, dash), whole);
  std::int32_t hi = parse_rank(item.substr(dash + 1), whole);
  if (hi < lo) {
    throw base::InputError(fmt::format("rank list '{}': range '{}' runs backwards", whole, item));
  }
  for (std::int32_t r = lo; r <= hi; ++r) {
    out.push_back(r);
  }
}

}  // namespace

std::vector<std::int32_t> parse_rank_list(std::string_view text) {
  std::vector<std::int32_t> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t comma = std::min(text.find(',', begin), text.size());
    add_item(text.substr(begin, comma - begin), text, out);
    begin = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::int32_t> parse_rank_list_or_empty(std::string_view text) {
  return text.empty() ? std::vector<std::int32_t>{} : parse_rank_list(text);
}

std::string format_rank_list(const std::vector<std::int32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    out += out.empty() ? "" : ",";
    if (j >= i + 2) {
      out += fmt::format("{}-{}", ranks[i], ranks[j]);
    } else {
      out += fmt::format("{}", ranks[i]);
      j = i;
    }
    i = j + 1;
  }
  return out;
}

}  // namespace tessera::sim::report
