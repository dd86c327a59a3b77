// SPDX-License-Identifier: Apache-2.0
// graph::chakra::critical_path: the longest chain by nodes, by recorded durations and by
// compute num_ops, each on its own; control dependencies count; a bad num_ops is bad input.
#include "graph/chakra/critical_path.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/input_error.h"

namespace tessera::graph::chakra {
namespace {

EtNode node(std::uint64_t id, EtNodeType type, std::vector<std::uint64_t> deps,
            std::uint64_t micros, std::int64_t num_ops = -1) {
  EtNode n{.id = id,
           .name = "n" + std::to_string(id),
           .type = static_cast<int>(type),
           .data_deps = std::move(deps),
           .ctrl_deps = {},
           .start_time_micros = 0,
           .duration_micros = micros,
           .attrs = {}};
  if (num_ops >= 0) {
    n.attrs.push_back({.name = "num_ops",
                       .kind = AttrKind::kInt,
                       .variant = "int64_val",
                       .int_val = num_ops,
                       .float_val = 0.0,
                       .string_val = "",
                       .int_list = {}});
  }
  return n;
}

CriticalPath path_of(const EtTrace& t) {
  return critical_path(t, order_trace(t));
}

// Two chains from node 1: 1 -> 2 -> 3 -> 4 (four nodes, 4 us, little compute) and
// 1 -> 5 (two nodes, but 100 us and the most FLOPs). A send does not add num_ops.
EtTrace two_chains() {
  EtTrace t{.path = "two.0.et", .version = "0.0.4", .metadata = {}, .nodes = {}};
  t.nodes = {node(1, EtNodeType::kComp, {}, 1, 10), node(2, EtNodeType::kComp, {1}, 1, 10),
             node(3, EtNodeType::kCommSend, {2}, 1, 1000000),
             node(4, EtNodeType::kComp, {3}, 1, 10), node(5, EtNodeType::kComp, {1}, 100, 5000)};
  return t;
}

TEST(ChakraCriticalPath, EachFigureOnItsOwnChain) {
  CriticalPath cp = path_of(two_chains());
  EXPECT_EQ(cp.nodes, 4U);
  EXPECT_EQ(cp.micros, 101U);
  EXPECT_EQ(cp.num_ops, 5010);
}

TEST(ChakraCriticalPath, ControlDependenciesCount) {
  EtTrace t = two_chains();
  t.nodes[4].ctrl_deps = {4};  // 5 now also after 4: 1 2 3 4 5
  CriticalPath cp = path_of(t);
  EXPECT_EQ(cp.nodes, 5U);
  EXPECT_EQ(cp.micros, 104U);
  EXPECT_EQ(cp.num_ops, 5030);
}

TEST(ChakraCriticalPath, EmptyTraceAndNegativeOps) {
  EtTrace empty{.path = "e.0.et", .version = "", .metadata = {}, .nodes = {}};
  CriticalPath none = path_of(empty);
  EXPECT_EQ(none.nodes, 0U);
  EXPECT_EQ(none.micros, 0U);
  EtTrace t{.path = "neg.0.et", .version = "", .metadata = {}, .nodes = {}};
  t.nodes = {node(1, EtNodeType::kComp, {}, 0, 0)};
  t.nodes[0].attrs[0].int_val = -7;
  EXPECT_EQ(path_of(t).num_ops, 0);
}

TEST(ChakraCriticalPath, NonIntegerNumOpsIsBadInput) {
  EtTrace t = two_chains();
  t.nodes[0].attrs[0].kind = AttrKind::kString;
  t.nodes[0].attrs[0].string_val = "many";
  std::string e = testing::error_of([&] { (void)path_of(t); });
  EXPECT_NE(e.find("two.0.et"), std::string::npos) << e;
}

}  // namespace
}  // namespace tessera::graph::chakra
