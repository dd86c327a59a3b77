// SPDX-License-Identifier: Apache-2.0
// Rank lists as people type them: "0,8,16-31".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::sim::report {

// "0,8,16-31" -> {0, 8, 16, ..., 31}, sorted, without repeats; throws base::InputError
// naming the bad item.
std::vector<std::int32_t> parse_rank_list(std::string_view text);
// As parse_rank_list, but "" -> {} (no list given).
std::vector<std::int32_t> parse_rank_list_or_empty(std::string_view text);
// The inverse for sorted ranks, runs of three or more as ranges: {0, 1, 2, 5} -> "0-2,5".
std::string format_rank_list(const std::vector<std::int32_t>& ranks);

}  // namespace tessera::sim::report
