// SPDX-License-Identifier: Apache-2.0
#include "synth/graph/chakra/tessera_attrs.h"

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

std::optional<OpClass> parse_op_class(std::string_view name) {
  return parse_enum<OpClass>(name, kNumOpClasses, op_class_name);
}

std::optional<Stream> parse_stream(std::string_view name) {
  return parse_enum<Stream>(name, kNumStreams, stream_name);
}

std::optional<Phase> parse_phase(std::string_view name) {
  return parse_enum<Phase>(name, 4, phase_name);
}

std::optional<GroupKind> parse_group_kind(std::string_view name) {
  return parse_enum<GroupKind>(name, kNumGroupKinds, group_kind_name);
}

std::optional<base::DType> parse_dtype(std::string_view name) {
  return parse_enum<base::DType>(name, base::kNumDTypes, base::dtype_name);
}

}  // namespace tessera::graph::chakra::tattr
