// SPDX-License-Identifier: Apache-2.0
#include "synth/scenario/unmodelled_keys.h"

#include <fmt/format.h>

#include <array>

namespace tessera::synth {

namespace {

struct Unmodelled {
  std::string_view section;
  std::string_view key;
  std::string_view value;  // "": the key itself is not modelled
  std::string_view what;
  std::string_view hint;
};

constexpr std::array<Unmodelled, 2> kUnmodelled = {{
    {"parallelism", "cp_comm", "a2a+p2p",
     "Transformer Engine's hierarchical context parallelism, all-to-all inside a ring",
     "cp_comm: a2a or allgather model the two halves"},
    {"training", "backward_prefetch", "none",
     "FSDP1 without backward prefetch: each gather issued only when its unit's backward starts",
     "backward_prefetch: post gathers after the previous unit's gradients, the nearest modelled"},
}};

}  // namespace

void reject_unmodelled(const base::YamlNode& section, std::string_view section_name) {
  if (!section.is_map()) {
    return;
  }
  for (const Unmodelled& u : kUnmodelled) {
    if (u.section != section_name || !section.has(u.key)) {
      continue;
    }
    const base::YamlNode value = section.at(u.key);
    if (u.value.empty()) {
      throw base::InputError(
          section.key_loc(u.key),
          fmt::format("`{}.{}` ({}) is not modelled yet", u.section, u.key, u.what),
          std::string(u.hint));
    }
    if (value.is_scalar() && value.as_string() == u.value) {
      throw base::InputError(
          value.loc(),
          fmt::format("`{}.{}: {}` ({}) is not modelled yet", u.section, u.key, u.value, u.what),
          std::string(u.hint));
    }
  }
}

}  // namespace tessera::synth
