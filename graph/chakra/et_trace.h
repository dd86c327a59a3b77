// SPDX-License-Identifier: Apache-2.0
// A Chakra .et file in neutral, protobuf-free form: what a trace says, before Tessera
// interprets it. The reader fills it; `inspect`-style tools can print it as is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::graph::chakra {

// Chakra's NodeType values (et_def.proto).
enum class EtNodeType : int {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};

// Chakra's CollectiveCommType values (et_def.proto).
enum class EtCollType : int {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
constexpr int kNumEtCollTypes = 10;

std::string_view et_node_type_name(int type);  // "COMP_NODE"; "?" when unknown
std::string_view et_coll_type_name(int type);  // "ALL_GATHER"; "?" when unknown

// What an attribute's value holds, whichever protobuf variant carried it.
enum class AttrKind : unsigned char {
  kNone,         // no value set
  kInt,          // any integer variant, in int_val
  kIntTooLarge,  // an unsigned 64-bit value above INT64_MAX
  kFloat,        // double or float, in float_val
  kBool,         // in int_val (0 or 1)
  kString,       // string or bytes, in string_val
  kList,         // any list; integer and bool lists also fill int_list
};

struct EtAttr {
  std::string name;
  AttrKind kind = AttrKind::kNone;
  std::string variant;  // the protobuf field that carried the value, e.g. "uint64_val"
  std::int64_t int_val = 0;
  double float_val = 0.0;
  std::string string_val;
  std::vector<std::int64_t> int_list;
};

struct EtNode {
  std::uint64_t id = 0;
  std::string name;
  int type = 0;  // EtNodeType value; unknown values are kept for the error message
  std::vector<std::uint64_t> data_deps;
  std::vector<std::uint64_t> ctrl_deps;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  std::vector<EtAttr> attrs;

  [[nodiscard]] const EtAttr* attr(std::string_view attr_name) const;
};

struct EtTrace {
  std::string path;     // the file it came from, for messages
  std::string version;  // GlobalMetadata.version; "" when absent (ASTRA-sim MSCCL traces)
  std::vector<EtAttr> metadata;
  std::vector<EtNode> nodes;  // in file order
};

// "node 12 ('COMP_NODE_tb0_step1')": how messages name a node.
std::string describe(const EtNode& n);

// The integer value of `attr_name`, nullopt when the node has no such attribute. Throws
// base::InputError naming the file and node when the value is not an integer or exceeds
// int64.
std::optional<std::int64_t> int_attr(const EtTrace& t, const EtNode& n, std::string_view attr_name);

// The string value of `attr_name` (string or bytes), nullopt when absent; InputError when
// it holds something else.
std::optional<std::string> string_attr(const EtTrace& t, const EtNode& n,
                                       std::string_view attr_name);

}  // namespace tessera::graph::chakra
