// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/et_trace.h"

#include <array>

#include "base/error.h"

namespace tessera::graph::chakra {

namespace {

constexpr std::array<std::string_view, 8> kNodeTypeNames = {
    "INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
};

constexpr std::array<std::string_view, kNumEtCollTypes> kCollTypeNames = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER",  "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER",
};

std::string_view kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kNone:
      return "no value";
    case AttrKind::kInt:
    case AttrKind::kIntTooLarge:
      return "an integer";
    case AttrKind::kFloat:
      return "a floating-point value";
    case AttrKind::kBool:
      return "a bool";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kList:
      return "a list";
  }
  return "?";
}

[[noreturn]] void wrong_kind(const EtTrace& t, const EtNode& n, const EtAttr& a,
                             std::string_view expected) {
  throw base::InputError(base::SourceLoc{t.path}, describe(n) + ": attribute '" + a.name +
                                                      "' holds " + std::string(kind_name(a.kind)) +
                                                      " (" + a.variant + "); expected " +
                                                      std::string(expected));
}

}  // namespace

std::string_view et_node_type_name(int type) {
  if (type < 0 || type >= static_cast<int>(kNodeTypeNames.size())) {
    return "?";
  }
  return kNodeTypeNames[static_cast<std::size_t>(type)];
}

std::string_view et_coll_type_name(int type) {
  if (type < 0 || type >= kNumEtCollTypes) {
    return "?";
  }
  return kCollTypeNames[static_cast<std::size_t>(type)];
}

const EtAttr* EtNode::attr(std::string_view attr_name) const {
  for (const EtAttr& a : attrs) {
    if (a.name == attr_name) {
      return &a;
    }
  }
  return nullptr;
}

std::string describe(const EtNode& n) {
  return "node " + std::to_string(n.id) + " ('" + n.name + "')";
}

std::optional<std::int64_t> int_attr(const EtTrace& t, const EtNode& n,
                                     std::string_view attr_name) {
  const EtAttr* a = n.attr(attr_name);
  if (a == nullptr) {
    return std::nullopt;
  }
  if (a->kind == AttrKind::kIntTooLarge) {
    throw base::InputError(base::SourceLoc{t.path}, describe(n) + ": attribute '" + a->name +
                                                        "' exceeds the 64-bit signed range");
  }
  if (a->kind != AttrKind::kInt) {
    wrong_kind(t, n, *a, "an integer");
  }
  return a->int_val;
}

std::optional<std::string> string_attr(const EtTrace& t, const EtNode& n,
                                       std::string_view attr_name) {
  const EtAttr* a = n.attr(attr_name);
  if (a == nullptr) {
    return std::nullopt;
  }
  if (a->kind != AttrKind::kString) {
    wrong_kind(t, n, *a, "a string");
  }
  return a->string_val;
}

}  // namespace tessera::graph::chakra
