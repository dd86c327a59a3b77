// SPDX-License-Identifier: Apache-2.0
#include "graph/exec_graph.h"

#include "base/error.h"

namespace tessera::graph {

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kGemm:
      return "gemm";
    case OpClass::kAttention:
      return "attention";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kNorm:
      return "norm";
    case OpClass::kSoftmax:
      return "softmax";
    case OpClass::kEmbedding:
      return "embedding";
    case OpClass::kLoss:
      return "loss";
    case OpClass::kOptimizer:
      return "optimizer";
    case OpClass::kCopy:
      return "copy";
  }
  return "?";
}

std::string_view coll_type_name(CollType c) {
  switch (c) {
    case CollType::kAllReduce:
      return "all_reduce";
    case CollType::kAllGather:
      return "all_gather";
    case CollType::kReduceScatter:
      return "reduce_scatter";
    case CollType::kAllToAll:
      return "all_to_all";
    case CollType::kBroadcast:
      return "broadcast";
    case CollType::kSendRecv:
      return "send_recv";
  }
  return "?";
}

std::string_view stream_name(Stream s) {
  switch (s) {
    case Stream::kCompute:
      return "compute";
    case Stream::kTP:
      return "tp_comm";
    case Stream::kDP:
      return "dp_comm";
    case Stream::kPPSendFwd:
      return "pp_send_activation";
    case Stream::kPPSendBwd:
      return "pp_send_grad";
    case Stream::kPPRecvFwd:
      return "pp_recv_activation";
    case Stream::kPPRecvBwd:
      return "pp_recv_grad";
    case Stream::kEP:
      return "ep_comm";
    case Stream::kDPGather:
      return "dp_gather";
    case Stream::kCP:
      return "cp_ring";
  }
  return "?";
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

std::string_view group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kTP:
      return "tp";
    case GroupKind::kDP:
      return "dp";
    case GroupKind::kPP:
      return "pp";
    case GroupKind::kCP:
      return "cp";
    case GroupKind::kEP:
      return "ep";
  }
  return "?";
}

NodeId RankGraph::add(const Node& n, std::span<const NodeId> on) {
  auto id = static_cast<NodeId>(nodes.size());
  for (NodeId d : on) {
    if (d >= id) {
      throw base::InternalError("RankGraph::add: dependency on a later node");
    }
    deps.push_back(d);
  }
  nodes.push_back(n);
  dep_begin.push_back(static_cast<std::uint32_t>(deps.size()));
  return id;
}

std::uint32_t ExecGraph::intern(std::string_view name) {
  auto [it, inserted] =
      name_index.try_emplace(std::string(name), static_cast<std::uint32_t>(names.size()));
  if (inserted) {
    names.emplace_back(name);
  }
  return it->second;
}

}  // namespace tessera::graph
