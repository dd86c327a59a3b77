// SPDX-License-Identifier: Apache-2.0
// An independent, minimal decoder of Chakra .et bytes for the tests: varint length prefixes
// and protobuf tag/wire-type pairs, with the field numbers of docs/chakra_format.md spelled out
// here. It shares no code with the reader, so a bug made symmetrically in reader and
// writer cannot pass the tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::chakra_test {

// Field numbers (docs/chakra_format.md).
constexpr int kMetaVersion = 1;
constexpr int kNodeId = 1, kNodeName = 2, kNodeType = 3, kNodeCtrlDeps = 4, kNodeDataDeps = 5;
constexpr int kNodeDuration = 7, kNodeAttr = 10;
constexpr int kAttrName = 1, kInt32Val = 7, kInt64Val = 9, kUint64Val = 13, kBoolVal = 27;
constexpr int kStringVal = 29;

struct RawField {
  int number = 0;
  int wire = 0;              // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  std::uint64_t varint = 0;  // wire 0
  std::string_view bytes;    // wire 2
};

inline std::uint64_t raw_varint(std::string_view s, std::size_t& pos) {
  std::uint64_t v = 0;
  for (unsigned shift = 0; pos < s.size() && shift < 64; shift += 7) {
    auto b = static_cast<unsigned char>(s[pos++]);
    v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
    if ((b & 0x80U) == 0) {
      return v;
    }
  }
  throw std::runtime_error("raw decoder: bad varint");
}

inline std::vector<RawField> raw_fields(std::string_view msg) {
  std::vector<RawField> out;
  std::size_t pos = 0;
  while (pos < msg.size()) {
    std::uint64_t key = raw_varint(msg, pos);
    RawField f;
    f.number = static_cast<int>(key >> 3U);
    f.wire = static_cast<int>(key & 7U);
    if (f.wire == 0) {
      f.varint = raw_varint(msg, pos);
    } else if (f.wire == 2) {
      auto len = static_cast<std::size_t>(raw_varint(msg, pos));
      f.bytes = msg.substr(pos, len);
      pos += len;
    } else {
      pos += f.wire == 1 ? 8 : 4;
    }
    out.push_back(f);
  }
  return out;
}

struct RawAttr {
  std::string name;
  int value_field = 0;  // which oneof member carried the value
  std::uint64_t varint = 0;
  std::string text;
};

struct RawNode {
  std::uint64_t id = 0;
  std::string name;
  int type = 0;
  std::uint64_t duration_micros = 0;
  std::vector<std::uint64_t> data_deps, ctrl_deps;
  std::vector<RawAttr> attrs;
  [[nodiscard]] const RawAttr* attr(std::string_view n) const {
    for (const auto& a : attrs) {
      if (a.name == n) {
        return &a;
      }
    }
    return nullptr;
  }
  // The attribute, or std::runtime_error when the node lacks it.
  [[nodiscard]] const RawAttr& at(std::string_view n) const {
    const RawAttr* a = attr(n);
    if (a == nullptr) {
      throw std::runtime_error("raw decoder: node " + name + " has no attribute " + std::string(n));
    }
    return *a;
  }
};

struct RawTrace {
  std::string version;
  std::vector<RawNode> nodes;
};

// Repeated uint64: packed (wire 2) or one value per field (wire 0).
inline void raw_append(const RawField& f, std::vector<std::uint64_t>& out) {
  if (f.wire == 0) {
    out.push_back(f.varint);
    return;
  }
  for (std::size_t pos = 0; pos < f.bytes.size();) {
    out.push_back(raw_varint(f.bytes, pos));
  }
}

inline RawAttr raw_attr(std::string_view msg) {
  RawAttr a;
  for (const RawField& f : raw_fields(msg)) {
    if (f.number == kAttrName) {
      a.name = std::string(f.bytes);
    } else {
      a.value_field = f.number;
      a.varint = f.varint;
      a.text = std::string(f.bytes);
    }
  }
  return a;
}

inline RawNode raw_node(std::string_view msg) {
  RawNode n;
  for (const RawField& f : raw_fields(msg)) {
    switch (f.number) {
      case kNodeId:
        n.id = f.varint;
        break;
      case kNodeName:
        n.name = std::string(f.bytes);
        break;
      case kNodeType:
        n.type = static_cast<int>(f.varint);
        break;
      case kNodeCtrlDeps:
        raw_append(f, n.ctrl_deps);
        break;
      case kNodeDataDeps:
        raw_append(f, n.data_deps);
        break;
      case kNodeDuration:
        n.duration_micros = f.varint;
        break;
      case kNodeAttr:
        n.attrs.push_back(raw_attr(f.bytes));
        break;
      default:
        break;
    }
  }
  return n;
}

inline RawTrace raw_decode(std::string_view file) {
  RawTrace t;
  bool first = true;
  for (std::size_t pos = 0; pos < file.size();) {
    auto len = static_cast<std::size_t>(raw_varint(file, pos));
    std::string_view msg = file.substr(pos, len);
    pos += len;
    if (first) {
      for (const RawField& f : raw_fields(msg)) {
        t.version = f.number == kMetaVersion ? std::string(f.bytes) : t.version;
      }
      first = false;
    } else {
      t.nodes.push_back(raw_node(msg));
    }
  }
  return t;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

}  // namespace tessera::chakra_test
