// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/trace_summary.h"

#include "graph/chakra/tessera_attrs.h"
#include "graph/exec_graph.h"

namespace tessera::graph::chakra {

namespace {

void add_collective(const EtTrace& t, const EtNode& n, TraceSummary& s) {
  auto type = int_attr(t, n, "comm_type").value_or(-1);
  CommVolume& c = s.collectives[std::string(et_coll_type_name(static_cast<int>(type)))];
  ++c.count;
  c.bytes += int_attr(t, n, "comm_size").value_or(0);
  c.groups.insert(string_attr(t, n, "pg_name").value_or("0"));
}

void add_message(const EtTrace& t, const EtNode& n, CommVolume& v) {
  ++v.count;
  v.bytes += int_attr(t, n, "comm_size").value_or(0);
}

// The op class packed in tessera.node (Tessera's own traces), when there is a valid one.
void add_compute(const EtTrace& t, const EtNode& n, TraceSummary& s) {
  s.num_ops += int_attr(t, n, "num_ops").value_or(0);
  s.tensor_bytes += int_attr(t, n, "tensor_size").value_or(0);
  const EtAttr* packed = n.attr(tattr::kNode);
  constexpr std::size_t kOp = tattr::kNodeCommon;  // [common..., op, dtype, ...]
  if (packed != nullptr && packed->int_list.size() > kOp && packed->int_list[kOp] >= 0 &&
      packed->int_list[kOp] < kNumOpClasses) {
    ++s.op_classes[std::string(op_class_name(static_cast<OpClass>(packed->int_list[kOp])))];
  }
}

}  // namespace

TraceSummary summarize_trace(const EtTrace& t) {
  TraceSummary s;
  for (const EtNode& n : t.nodes) {
    ++s.node_types[std::string(et_node_type_name(n.type))];
    if (n.type == static_cast<int>(EtNodeType::kCommColl)) {
      add_collective(t, n, s);
    } else if (n.type == static_cast<int>(EtNodeType::kCommSend)) {
      add_message(t, n, s.sends);
    } else if (n.type == static_cast<int>(EtNodeType::kCommRecv)) {
      add_message(t, n, s.recvs);
    } else if (n.type == static_cast<int>(EtNodeType::kComp)) {
      add_compute(t, n, s);
    }
  }
  return s;
}

}  // namespace tessera::graph::chakra
