// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/tessera_attrs.h"

namespace tessera::graph::chakra::tattr {

namespace {

// The enum value whose name(v) is `text`, trying 0 .. count - 1.
template <typename E, typename NameFn>
std::optional<E> parse_enum(std::string_view text, int count, NameFn name) {
  for (int i = 0; i < count; ++i) {
    const auto v = static_cast<E>(i);
    if (name(v) == text) {
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<GroupKind> parse_group_kind(std::string_view name) {
  return parse_enum<GroupKind>(name, kNumGroupKinds, group_kind_name);
}

std::optional<base::DType> parse_dtype(std::string_view name) {
  return parse_enum<base::DType>(name, base::kNumDTypes, base::dtype_name);
}

}  // namespace tessera::graph::chakra::tattr
