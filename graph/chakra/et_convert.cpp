// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/et_convert.h"

#include <algorithm>
#include <array>
#include <optional>

#include "base/error.h"
#include "graph/chakra/et_order.h"
#include "graph/chakra/tessera_attrs.h"

namespace tessera::graph::chakra {

namespace {

constexpr std::int64_t kPsPerMicro = 1'000'000;

[[noreturn]] void fail(const EtTrace& t, const EtNode& n, const std::string& message,
                       const std::string& hint = "") {
  throw base::InputError(base::SourceLoc{t.path}, describe(n) + ": " + message, hint);
}

// Everything converting one node needs besides the node itself.
struct Ctx {
  const EtTrace& t;
  std::int32_t rank;
  GroupTable& groups;
  const ImportOptions& options;
};

std::int64_t required(const Ctx& c, const EtNode& n, std::string_view attr,
                      const std::string& hint = "") {
  std::optional<std::int64_t> v = int_attr(c.t, n, attr);
  if (!v) {
    fail(c.t, n, "missing attribute '" + std::string(attr) + "'", hint);
  }
  return *v;
}

std::int64_t size_attr(const Ctx& c, const EtNode& n, std::string_view attr, bool need) {
  std::int64_t v = need ? required(c, n, attr) : int_attr(c.t, n, attr).value_or(0);
  if (v < 0) {
    fail(c.t, n, "attribute '" + std::string(attr) + "' is negative");
  }
  return v;
}

base::SimTime duration_of(const Ctx& c, const EtNode& n) {
  if (n.duration_micros > static_cast<std::uint64_t>(INT64_MAX / kPsPerMicro)) {
    fail(c.t, n, "duration_micros is out of range");
  }
  return static_cast<base::SimTime>(n.duration_micros) * kPsPerMicro;
}

void to_compute(const Ctx& c, const EtNode& n, Node& out) {
  const bool has_roofline = n.attr("num_ops") != nullptr || n.attr("tensor_size") != nullptr;
  const EtAttr* cpu = n.attr("is_cpu_op");
  const bool cpu_op = cpu != nullptr && cpu->kind != AttrKind::kList && cpu->int_val != 0;
  out.flops = static_cast<double>(size_attr(c, n, "num_ops", false));
  out.bytes = static_cast<double>(size_attr(c, n, "tensor_size", false));
  out.op = out.flops > 0.0 ? OpClass::kGemm : OpClass::kElementwise;
  if (c.options.use_durations || cpu_op || !has_roofline) {
    out.fixed_duration = duration_of(c, n);
  }
}

std::optional<CollType> coll_of(int type) {
  static constexpr std::array<std::optional<CollType>, kNumEtCollTypes> kMap = {
      CollType::kAllReduce,
      std::nullopt,
      CollType::kAllGather,
      std::nullopt,
      std::nullopt,
      CollType::kBroadcast,
      CollType::kAllToAll,
      CollType::kReduceScatter,
      CollType::kReduceScatter,
      CollType::kAllReduce,
  };
  if (type < 0 || type >= kNumEtCollTypes) {
    return std::nullopt;
  }
  return kMap[static_cast<std::size_t>(type)];
}

[[noreturn]] void reject_coll(const Ctx& c, const EtNode& n, std::int64_t type) {
  std::string_view name =
      type >= 0 && type < kNumEtCollTypes ? et_coll_type_name(static_cast<int>(type)) : "?";
  fail(c.t, n,
       name != "?" ? std::string(name) + " (" + std::to_string(type) + ") is not supported"
                   : "unknown collective type " + std::to_string(type),
       "supported comm_type values: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, "
       "REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BROADCAST, BARRIER");
}

void to_collective(const Ctx& c, const EtNode& n, Node& out) {
  const std::int64_t type = required(c, n, "comm_type");
  std::optional<CollType> coll =
      coll_of(static_cast<int>(std::clamp<std::int64_t>(type, -1, kNumEtCollTypes)));
  if (!coll) {
    reject_coll(c, n, type);
  }
  out.kind = NodeKind::kCollective;
  out.coll = *coll;
  out.stream = Stream::kDP;
  out.bytes = type == static_cast<int>(EtCollType::kBarrier)
                  ? 0.0
                  : static_cast<double>(size_attr(c, n, "comm_size", true));
  out.group = c.groups.use(string_attr(c.t, n, "pg_name").value_or(""), c.rank, c.t, n);
}

std::int32_t rank_attr(const Ctx& c, const EtNode& n, std::string_view attr) {
  std::int64_t r = required(c, n, attr,
                            "a send needs comm_dst and comm_tag, a recv comm_src and "
                            "comm_tag, to be matched with its partner");
  if (r < 0 || r >= c.options.num_ranks) {
    fail(c.t, n,
         std::string(attr) + " " + std::to_string(r) + " is not a rank in [0, " +
             std::to_string(c.options.num_ranks) + ")");
  }
  return static_cast<std::int32_t>(r);
}

void to_p2p(const Ctx& c, const EtNode& n, bool send, Node& out) {
  const char* peer_attr = send ? "comm_dst" : "comm_src";
  const char* self_attr = send ? "comm_src" : "comm_dst";
  out.kind = send ? NodeKind::kSend : NodeKind::kRecv;
  out.stream = send ? Stream::kPPSendFwd : Stream::kPPRecvFwd;
  out.peer = rank_attr(c, n, peer_attr);
  out.tag = required(c, n, "comm_tag", "a send and its recv must carry the same comm_tag");
  out.bytes = static_cast<double>(size_attr(c, n, "comm_size", true));
  std::optional<std::int64_t> self = int_attr(c.t, n, self_attr);
  if (self && *self != c.rank) {
    fail(c.t, n,
         std::string(self_attr) + " is " + std::to_string(*self) +
             " but this is the trace of rank " + std::to_string(c.rank));
  }
}

Node to_node(const Ctx& c, const EtNode& n) {
  Node out;
  switch (static_cast<EtNodeType>(n.type)) {
    case EtNodeType::kComp:
      to_compute(c, n, out);
      break;
    case EtNodeType::kCommColl:
      to_collective(c, n, out);
      break;
    case EtNodeType::kCommSend:
    case EtNodeType::kCommRecv:
      to_p2p(c, n, n.type == static_cast<int>(EtNodeType::kCommSend), out);
      break;
    case EtNodeType::kMemLoad:
    case EtNodeType::kMemStore:
      out.op = OpClass::kCopy;
      out.bytes = static_cast<double>(size_attr(c, n, "tensor_size", false));
      break;
    case EtNodeType::kMetadata:
      out.fixed_duration = 0;
      break;
    default:
      fail(c.t, n,
           "unsupported node type " + std::to_string(n.type) + " (" +
               std::string(et_node_type_name(n.type)) + ")");
  }
  return out;
}

double double_attr(const Ctx& c, const EtNode& n, const char* name, double fallback) {
  const EtAttr* a = n.attr(name);
  if (a == nullptr) {
    return fallback;
  }
  if (a->kind != AttrKind::kFloat) {
    fail(c.t, n, std::string("attribute '") + name + "' is not a floating-point value");
  }
  return a->float_val;
}

// list[i] as an enum value below `count`, or InputError.
template <typename E>
E enum_at(const Ctx& c, const EtNode& n, const std::vector<std::int64_t>& list, std::size_t i,
          int count, const char* what) {
  if (list[i] < 0 || list[i] >= count) {
    fail(c.t, n,
         std::string("attribute '") + tattr::kNode + "' holds " + std::to_string(list[i]) +
             ", not a " + what);
  }
  return static_cast<E>(list[i]);
}

// tessera.node (tessera_attrs.h): stream, phase, microbatch, layer, memory; op, dtype and
// GEMM dims for compute nodes.
void apply_packed(const Ctx& c, const EtNode& n, Node& out) {
  const EtAttr* a = n.attr(tattr::kNode);
  if (a == nullptr) {
    return;
  }
  const std::vector<std::int64_t>& v = a->int_list;
  const bool compute = out.kind == NodeKind::kCompute;
  const std::size_t want = !compute ? tattr::kNodeCommon : tattr::kNodeCompute;
  if (a->kind != AttrKind::kList || (v.size() != want && v.size() != tattr::kNodeGemm) ||
      (v.size() == tattr::kNodeGemm && !compute)) {
    fail(c.t, n,
         std::string("attribute '") + tattr::kNode + "' is not a list of " + std::to_string(want) +
             (compute ? " or 12" : "") + " integers");
  }
  const auto stream = enum_at<Stream>(c, n, v, 0, kNumStreams, "stream");
  const bool p2p = out.kind == NodeKind::kSend || out.kind == NodeKind::kRecv;
  // A collective over a group of one is written as a compute node taking no time on its
  // collective's stream (synth: nothing to communicate).
  const bool group_of_one = compute && int_attr(c.t, n, tattr::kDurationPs).value_or(-1) == 0;
  if (p2p == ordered_stream(stream) || (compute != (stream == Stream::kCompute) && !group_of_one)) {
    fail(c.t, n, "stream '" + std::string(stream_name(stream)) + "' does not fit this node type");
  }
  out.stream = stream;
  out.phase = enum_at<Phase>(c, n, v, 1, 4, "phase");
  out.microbatch = static_cast<std::int32_t>(v[2] - 1);
  out.layer = static_cast<std::int32_t>(v[3] - 1);
  out.mem_alloc = v[4];
  out.mem_free = v[5];
  if (compute) {
    out.op = enum_at<OpClass>(c, n, v, 6, kNumOpClasses, "op class");
    out.dtype = enum_at<base::DType>(c, n, v, 7, base::kNumDTypes, "dtype");
    if (v.size() == tattr::kNodeGemm) {
      out.gemm = GemmDims{v[8], v[9], v[10], v[11]};
    }
  }
}

// tessera.comm_memory: the communication-buffer part of mem_alloc / mem_free.
void apply_comm_memory(const Ctx& c, const EtNode& n, Node& out) {
  const EtAttr* a = n.attr(tattr::kCommMemory);
  if (a == nullptr) {
    return;
  }
  const std::vector<std::int64_t>& v = a->int_list;
  if (a->kind != AttrKind::kList || v.size() != 2 || v[0] < 0 || v[1] < 0 || v[0] > out.mem_alloc ||
      v[1] > out.mem_free) {
    fail(c.t, n,
         std::string("attribute '") + tattr::kCommMemory +
             "' is not two integers within the node's mem_alloc and mem_free");
  }
  out.comm_alloc = v[0];
  out.comm_free = v[1];
}

// What a Tessera trace adds beyond Chakra (tessera_attrs.h); absent attributes leave the
// standard reading alone. Returns whether tessera.bytes set the exact bytes.
bool apply_tessera(const Ctx& c, const EtNode& n, Node& out) {
  apply_packed(c, n, out);
  out.flops = double_attr(c, n, tattr::kFlops, out.flops);
  const bool exact_bytes = n.attr(tattr::kBytes) != nullptr;
  out.bytes = double_attr(c, n, tattr::kBytes, out.bytes);
  if (auto ps = int_attr(c.t, n, tattr::kDurationPs)) {
    out.fixed_duration = *ps;
  }
  if (auto sms = int_attr(c.t, n, tattr::kCommSms); sms && *sms > 0 && *sms < 1024) {
    out.comm_sms = static_cast<std::int32_t>(*sms);
  }
  out.causal = int_attr(c.t, n, tattr::kCausal).value_or(0) != 0;
  apply_comm_memory(c, n, out);
  return exact_bytes;
}

// A ctrl dep between two nodes of the same ordered stream (compute or collectives) is
// already implied by the stream order.
bool implied_by_stream(const Node& dep, const Node& node) {
  return dep.stream == node.stream && ordered_stream(node.stream);
}

}  // namespace

RankGraph convert_rank(const EtTrace& t, std::int32_t rank, GroupTable& groups, ExecGraph& graph,
                       const ImportOptions& options, std::vector<NodeId>* exact_bytes) {
  const TraceOrder order = order_trace(t);
  const Ctx c{t, rank, groups, options};
  std::vector<Node> nodes(t.nodes.size());
  std::vector<char> exact(t.nodes.size(), 0);
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    nodes[i] = to_node(c, t.nodes[i]);
    exact[i] = apply_tessera(c, t.nodes[i], nodes[i]) ? 1 : 0;
    nodes[i].name = graph.intern(t.nodes[i].name);
  }
  std::vector<NodeId> new_id(t.nodes.size());
  RankGraph out;
  std::vector<NodeId> deps;
  for (std::size_t pos : order.order) {
    deps.clear();
    for (const TraceDep& d : order.deps[pos]) {
      if (!d.ctrl || !implied_by_stream(nodes[d.pos], nodes[pos])) {
        deps.push_back(new_id[d.pos]);
      }
    }
    new_id[pos] = out.add(nodes[pos], deps);
    if (exact[pos] != 0 && exact_bytes != nullptr) {
      exact_bytes->push_back(new_id[pos]);
    }
  }
  return out;
}

}  // namespace tessera::graph::chakra
