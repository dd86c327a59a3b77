// SPDX-License-Identifier: Apache-2.0
// graph::chakra::summarize_trace: node types, compute totals and op classes, collectives by
// type with volume and groups, point-to-point messages.
#include "graph/chakra/trace_summary.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "graph/chakra/tessera_attrs.h"
#include "graph/exec_graph.h"

namespace tessera::graph::chakra {
namespace {

EtAttr int_attr_of(const std::string& name, std::int64_t v) {
  return {.name = name,
          .kind = AttrKind::kInt,
          .variant = "int64_val",
          .int_val = v,
          .float_val = 0.0,
          .string_val = "",
          .int_list = {}};
}

EtAttr string_attr_of(const std::string& name, const std::string& v) {
  return {.name = name,
          .kind = AttrKind::kString,
          .variant = "string_val",
          .int_val = 0,
          .float_val = 0.0,
          .string_val = v,
          .int_list = {}};
}

EtNode node(std::uint64_t id, EtNodeType type, std::vector<EtAttr> attrs) {
  return {.id = id,
          .name = "n" + std::to_string(id),
          .type = static_cast<int>(type),
          .data_deps = {},
          .ctrl_deps = {},
          .start_time_micros = 0,
          .duration_micros = 0,
          .attrs = std::move(attrs)};
}

TEST(ChakraTraceSummary, CountsAndVolumes) {
  EtAttr packed{.name = tattr::kNode,
                .kind = AttrKind::kList,
                .variant = "int64_list",
                .int_val = 0,
                .float_val = 0.0,
                .string_val = "",
                .int_list = {0, 0, 1, 1, 0, 0, static_cast<std::int64_t>(OpClass::kGemm), 0}};
  EtTrace t{.path = "s.0.et", .version = "0.0.4", .metadata = {}, .nodes = {}};
  t.nodes = {node(1, EtNodeType::kComp,
                  {int_attr_of("num_ops", 100), int_attr_of("tensor_size", 10), packed}),
             node(2, EtNodeType::kComp, {int_attr_of("num_ops", 50)}),
             node(3, EtNodeType::kCommColl,
                  {int_attr_of("comm_type", static_cast<int>(EtCollType::kAllReduce)),
                   int_attr_of("comm_size", 1000), string_attr_of("pg_name", "1")}),
             node(4, EtNodeType::kCommColl,
                  {int_attr_of("comm_type", static_cast<int>(EtCollType::kAllReduce)),
                   int_attr_of("comm_size", 24), string_attr_of("pg_name", "2")}),
             node(5, EtNodeType::kCommColl,
                  {int_attr_of("comm_type", static_cast<int>(EtCollType::kAllGather))}),
             node(6, EtNodeType::kCommSend, {int_attr_of("comm_size", 7)}),
             node(7, EtNodeType::kCommRecv, {int_attr_of("comm_size", 8)}),
             node(8, EtNodeType::kCommRecv, {int_attr_of("comm_size", 9)})};
  TraceSummary s = summarize_trace(t);
  EXPECT_EQ(s.node_types.at("COMP_NODE"), 2U);
  EXPECT_EQ(s.node_types.at("COMM_COLL_NODE"), 3U);
  EXPECT_EQ(s.num_ops, 150);
  EXPECT_EQ(s.tensor_bytes, 10);
  ASSERT_EQ(s.op_classes.size(), 1U);  // only the node with tessera.node has a class
  EXPECT_EQ(s.op_classes.begin()->second, 1U);
  const CommVolume& ar = s.collectives.at("ALL_REDUCE");
  EXPECT_EQ(ar.count, 2U);
  EXPECT_EQ(ar.bytes, 1024);
  EXPECT_EQ(ar.groups.size(), 2U);
  EXPECT_EQ(s.collectives.at("ALL_GATHER").groups, std::set<std::string>{"0"});
  EXPECT_EQ(s.sends.count, 1U);
  EXPECT_EQ(s.sends.bytes, 7);
  EXPECT_EQ(s.recvs.count, 2U);
  EXPECT_EQ(s.recvs.bytes, 17);
}

TEST(ChakraTraceSummary, EmptyTrace) {
  EtTrace t{.path = "e.0.et", .version = "", .metadata = {}, .nodes = {}};
  TraceSummary s = summarize_trace(t);
  EXPECT_TRUE(s.node_types.empty());
  EXPECT_TRUE(s.collectives.empty());
  EXPECT_EQ(s.num_ops, 0);
}

}  // namespace
}  // namespace tessera::graph::chakra
