// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/et_attrs.h"

#include <limits>

namespace tessera::graph::chakra {

namespace pb = ChakraProtoMsg;

namespace {

void set_int(EtAttr& a, std::int64_t v) {
  a.kind = AttrKind::kInt;
  a.int_val = v;
}

void set_uint(EtAttr& a, std::uint64_t v) {
  const bool fits = v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  a.kind = fits ? AttrKind::kInt : AttrKind::kIntTooLarge;
  a.int_val = fits ? static_cast<std::int64_t>(v) : std::numeric_limits<std::int64_t>::max();
}

template <typename List>
void set_list(EtAttr& a, const List& list) {
  a.kind = AttrKind::kList;
  for (auto v : list.values()) {
    a.int_list.push_back(static_cast<std::int64_t>(v));
  }
}

// Scalars; returns false for list variants.
bool set_scalar(EtAttr& a, const pb::AttributeProto& p) {
  using P = pb::AttributeProto;
  switch (p.value_case()) {
    case P::kDoubleVal:
      a.kind = AttrKind::kFloat;
      a.float_val = p.double_val();
      return true;
    case P::kFloatVal:
      a.kind = AttrKind::kFloat;
      a.float_val = static_cast<double>(p.float_val());
      return true;
    case P::kInt32Val:
      set_int(a, p.int32_val());
      return true;
    case P::kInt64Val:
      set_int(a, p.int64_val());
      return true;
    case P::kUint32Val:
      set_int(a, p.uint32_val());
      return true;
    case P::kUint64Val:
      set_uint(a, p.uint64_val());
      return true;
    case P::kSint32Val:
      set_int(a, p.sint32_val());
      return true;
    case P::kSint64Val:
      set_int(a, p.sint64_val());
      return true;
    case P::kFixed32Val:
      set_int(a, p.fixed32_val());
      return true;
    case P::kFixed64Val:
      set_uint(a, p.fixed64_val());
      return true;
    case P::kSfixed32Val:
      set_int(a, p.sfixed32_val());
      return true;
    case P::kSfixed64Val:
      set_int(a, p.sfixed64_val());
      return true;
    case P::kBoolVal:
      a.kind = AttrKind::kBool;
      a.int_val = p.bool_val() ? 1 : 0;
      return true;
    case P::kStringVal:
    case P::kBytesVal:
      a.kind = AttrKind::kString;
      a.string_val = p.has_string_val() ? p.string_val() : p.bytes_val();
      return true;
    default:
      return false;
  }
}

// Integer and bool lists keep their values; other lists only their kind.
void set_list_value(EtAttr& a, const pb::AttributeProto& p) {
  using P = pb::AttributeProto;
  a.kind = AttrKind::kList;
  switch (p.value_case()) {
    case P::kInt32List:
      return set_list(a, p.int32_list());
    case P::kInt64List:
      return set_list(a, p.int64_list());
    case P::kUint32List:
      return set_list(a, p.uint32_list());
    case P::kUint64List:
      return set_list(a, p.uint64_list());
    case P::kSint32List:
      return set_list(a, p.sint32_list());
    case P::kSint64List:
      return set_list(a, p.sint64_list());
    case P::kBoolList:
      return set_list(a, p.bool_list());
    default:
      return;
  }
}

}  // namespace

EtAttr to_attr(const pb::AttributeProto& p) {
  EtAttr a;
  a.name = p.name();
  if (p.value_case() == pb::AttributeProto::VALUE_NOT_SET) {
    return a;
  }
  a.variant = pb::AttributeProto::descriptor()->FindFieldByNumber(p.value_case())->name();
  if (!set_scalar(a, p)) {
    set_list_value(a, p);
  }
  return a;
}

}  // namespace tessera::graph::chakra
