// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/chakra_writer.h"

#include <google/protobuf/util/delimited_message_util.h>

#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "base/error.h"
#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/comm_groups.h"
#include "graph/chakra/et_def.pb.h"
#include "graph/chakra/tessera_attrs.h"

namespace tessera::graph::chakra {

namespace pb = ChakraProtoMsg;

namespace {

constexpr double kPsPerMicro = 1e6;

pb::AttributeProto& add_attr(pb::Node& node, const char* name) {
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  return *a;
}

std::int64_t to_int(double v) {
  return static_cast<std::int64_t>(std::llround(v));
}

// Small values as int32 (what ASTRA-sim's own traces use for peers and tags).
void set_small_int(pb::AttributeProto& a, std::int64_t v) {
  if (v >= std::numeric_limits<std::int32_t>::min() &&
      v <= std::numeric_limits<std::int32_t>::max()) {
    a.set_int32_val(static_cast<std::int32_t>(v));
  } else {
    a.set_int64_val(v);
  }
}

pb::CollectiveCommType comm_type(CollType c) {
  switch (c) {
    case CollType::kAllReduce:
      return pb::ALL_REDUCE;
    case CollType::kAllGather:
      return pb::ALL_GATHER;
    case CollType::kReduceScatter:
      return pb::REDUCE_SCATTER;
    case CollType::kAllToAll:
      return pb::ALL_TO_ALL;
    case CollType::kBroadcast:
      return pb::BROADCAST;
    case CollType::kSendRecv:
      throw base::InputError(
          "a ring exchange (parallelism.cp_comm: p2p) cannot be written as Chakra: the format "
          "has no collective for a shift around a ring; export the scenario with cp_comm: "
          "allgather or a2a");
  }
  throw base::InternalError("chakra writer: unknown collective type");
}

// Everything writing one rank's nodes needs besides the node.
struct RankCtx {
  const ExecGraph& graph;
  std::int32_t rank;
  const ExportOptions& options;

  [[nodiscard]] std::int32_t group(std::int32_t g) const {
    return options.group_of ? options.group_of(g) : g;
  }
  [[nodiscard]] std::int32_t peer(std::int32_t p) const {
    return options.peer_of ? options.peer_of(p) : p;
  }
};

// num_ops and tensor_size: the FLOPs and bytes, but at least 1 each. ASTRA-sim's roofline
// takes num_ops / min(bandwidth x num_ops / tensor_size, peak), which is 0 / 0 for a node
// without FLOPs (its runtime becomes garbage), and it skips a node with tensor_size 0
// without issuing the nodes that become ready, so the rank hangs. With 1 FLOP a memory-only
// node takes its memory time, tensor_size / bandwidth, and a free node ~0 ns.
// tessera.flops / tessera.bytes keep the exact values.
std::int64_t num_ops_of(const Node& n) {
  return std::max<std::int64_t>(to_int(n.flops), 1);
}

std::int64_t tensor_size_of(const Node& n) {
  return std::max<std::int64_t>(to_int(n.bytes), 1);
}

void fill_compute(const Node& n, pb::Node& out) {
  out.set_type(pb::COMP_NODE);
  add_attr(out, "num_ops").set_int64_val(num_ops_of(n));
  add_attr(out, "tensor_size").set_uint64_val(static_cast<std::uint64_t>(tensor_size_of(n)));
  if (n.fixed_duration >= 0) {
    out.set_duration_micros(static_cast<std::uint64_t>(
        std::llround(static_cast<double>(n.fixed_duration) / kPsPerMicro)));
  }
}

void fill_collective(const RankCtx& c, const Node& n, pb::Node& out) {
  const std::int32_t g = c.group(n.group);
  if (g < 0 || static_cast<std::size_t>(g) >= c.graph.groups.size()) {
    throw base::InternalError("chakra writer: collective on an unknown group");
  }
  double bytes = n.bytes;
  if (n.coll == CollType::kAllGather) {
    bytes /= static_cast<double>(c.graph.groups[static_cast<std::size_t>(g)].ranks.size());
  }
  out.set_type(pb::COMM_COLL_NODE);
  add_attr(out, "comm_type").set_int64_val(comm_type(n.coll));
  add_attr(out, "comm_size").set_int64_val(to_int(bytes));
  add_attr(out, "pg_name").set_string_val(pg_name_of(g));
}

void fill_p2p(const RankCtx& c, const Node& n, pb::Node& out) {
  const bool send = n.kind == NodeKind::kSend;
  const std::int32_t peer = c.peer(n.peer);
  out.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
  set_small_int(add_attr(out, "comm_src"), send ? c.rank : peer);
  set_small_int(add_attr(out, "comm_dst"), send ? peer : c.rank);
  set_small_int(add_attr(out, "comm_tag"), n.tag);
  add_attr(out, "comm_size").set_int64_val(to_int(n.bytes));
}

bool in_order_stream(Stream s) {
  return graph::ordered_stream(s);
}

void fill_deps(const RankGraph& rg, NodeId i, NodeId stream_prev, bool has_prev, pb::Node& out) {
  auto [begin, end] = rg.deps_of(i);
  bool implied = !has_prev;
  for (const NodeId* d = begin; d != end; ++d) {
    out.add_data_deps(*d);
    implied = implied || *d == stream_prev;
  }
  if (!implied) {
    out.add_ctrl_deps(stream_prev);
  }
}

void write_message(const google::protobuf::MessageLite& m, std::ofstream& out,
                   const std::string& path) {
  if (!google::protobuf::util::SerializeDelimitedToOstream(m, &out) || !out) {
    throw base::InputError(base::SourceLoc{path}, "cannot write the trace file");
  }
}

// Node i of `rg` with its deps and attributes; `last` holds each stream's previous node.
// What read_chakra rebuilds Node::bytes from without tessera.bytes: tensor_size, or
// comm_size (times the group size for an all-gather).
double standard_bytes(const RankCtx& c, const Node& n) {
  if (n.kind == NodeKind::kCompute) {
    return static_cast<double>(tensor_size_of(n));
  }
  if (n.kind == NodeKind::kCollective && n.coll == CollType::kAllGather) {
    const auto size = static_cast<double>(
        c.graph.groups[static_cast<std::size_t>(c.group(n.group))].ranks.size());
    return static_cast<double>(to_int(n.bytes / size)) * size;
  }
  return static_cast<double>(to_int(n.bytes));
}

// The tessera.* attributes (tessera_attrs.h): what the simulator reads beyond Chakra's.
void fill_tessera(const RankCtx& c, const Node& n, pb::Node& out) {
  auto* list = add_attr(out, tattr::kNode).mutable_int64_list();
  for (std::int64_t v : {static_cast<std::int64_t>(n.stream), static_cast<std::int64_t>(n.phase),
                         static_cast<std::int64_t>(n.microbatch) + 1,
                         static_cast<std::int64_t>(n.layer) + 1, n.mem_alloc, n.mem_free}) {
    list->add_values(v);
  }
  if (n.kind == NodeKind::kCompute) {
    list->add_values(static_cast<std::int64_t>(n.op));
    list->add_values(static_cast<std::int64_t>(n.dtype));
    if (n.op == OpClass::kGemm || n.op == OpClass::kAttention) {
      for (std::int64_t v : {n.gemm.m, n.gemm.n, n.gemm.k, n.gemm.batch}) {
        list->add_values(v);
      }
    }
    if (n.causal) {
      add_attr(out, tattr::kCausal).set_int64_val(1);
    }
    if (static_cast<double>(num_ops_of(n)) != n.flops) {
      add_attr(out, tattr::kFlops).set_double_val(n.flops);
    }
  }
  if (standard_bytes(c, n) != n.bytes) {
    add_attr(out, tattr::kBytes).set_double_val(n.bytes);
  }
  if (n.fixed_duration >= 0) {
    add_attr(out, tattr::kDurationPs).set_int64_val(n.fixed_duration);
  }
  if (n.comm_sms > 0) {
    add_attr(out, tattr::kCommSms).set_int64_val(n.comm_sms);
  }
  if (n.comm_alloc != 0 || n.comm_free != 0) {
    auto* comm = add_attr(out, tattr::kCommMemory).mutable_int64_list();
    comm->add_values(n.comm_alloc);
    comm->add_values(n.comm_free);
  }
}

pb::AttributeProto& add_meta(pb::GlobalMetadata& meta, const std::string& name) {
  pb::AttributeProto* a = meta.add_attr();
  a->set_name(name);
  return *a;
}

// The rank's stage and static memory, the step's totals, and every group it uses.
void fill_tessera_metadata(const RankCtx& c, const RankGraph& rg, pb::GlobalMetadata& meta) {
  add_meta(meta, tattr::kProducer).set_string_val("tessera");
  add_meta(meta, tattr::kRank).set_int64_val(c.rank);
  add_meta(meta, tattr::kStage).set_int64_val(rg.stage);
  add_meta(meta, tattr::kStaticMemory).set_int64_val(rg.static_memory);
  add_meta(meta, tattr::kWeightMemory).set_int64_val(rg.weight_memory);
  add_meta(meta, tattr::kGradMemory).set_int64_val(rg.grad_memory);
  add_meta(meta, tattr::kPrecision)
      .set_string_val(std::string(base::dtype_name(c.options.precision)));
  add_meta(meta, tattr::kModelFlops).set_double_val(c.graph.info.model_flops);
  add_meta(meta, tattr::kHardwareFlops).set_double_val(c.graph.info.hardware_flops);
  add_meta(meta, tattr::kTokens).set_double_val(c.graph.info.tokens);
  add_meta(meta, tattr::kCausalAttentionFlops).set_double_val(c.graph.info.causal_attention_flops);
  add_meta(meta, tattr::kFlopsConvention).set_string_val(c.graph.info.flops_convention);
  if (c.graph.info.attention_fa2) {
    add_meta(meta, tattr::kAttentionFa2).set_int64_val(1);
  }
  if (c.graph.info.cuda_graphs) {
    add_meta(meta, tattr::kCudaGraphs).set_int64_val(1);
  }
  if (c.graph.info.fp8_block_scaled) {
    add_meta(meta, tattr::kFp8BlockScaled).set_int64_val(1);
  }
  std::set<std::int32_t> used;
  for (const Node& n : rg.nodes) {
    if (n.kind == NodeKind::kCollective) {
      used.insert(c.group(n.group));
    }
  }
  for (std::int32_t g : used) {
    if (g < 0 || static_cast<std::size_t>(g) >= c.graph.groups.size()) {
      continue;  // fill_collective reports it
    }
    const Group& group = c.graph.groups[static_cast<std::size_t>(g)];
    add_meta(meta, std::string(tattr::kGroupKindPrefix) + pg_name_of(g))
        .set_string_val(std::string(group_kind_name(group.kind)));
    auto* list =
        add_meta(meta, std::string(tattr::kGroupRanksPrefix) + pg_name_of(g)).mutable_int64_list();
    for (std::int32_t r : group.ranks) {
      list->add_values(r);
    }
  }
}

void fill_node(const RankCtx& c, const RankGraph& rg, NodeId i,
               std::array<std::int64_t, kNumStreams>& last, pb::Node& node) {
  const Node& n = rg.nodes[i];
  node.Clear();
  node.set_id(i);
  node.set_name(c.graph.names[n.name]);
  std::int64_t& prev = last[static_cast<std::size_t>(n.stream)];
  const bool chain = c.options.stream_order_ctrl_deps && in_order_stream(n.stream) && prev >= 0;
  fill_deps(rg, i, static_cast<NodeId>(std::max<std::int64_t>(prev, 0)), chain, node);
  prev = i;
  add_attr(node, "is_cpu_op").set_bool_val(false);
  if (n.kind == NodeKind::kCompute) {
    fill_compute(n, node);
  } else if (n.kind == NodeKind::kCollective) {
    fill_collective(c, n, node);
  } else {
    fill_p2p(c, n, node);
  }
  if (c.options.tessera_attrs) {
    fill_tessera(c, n, node);
  }
}

}  // namespace

void write_rank(const ExecGraph& graph, const RankGraph& rg, std::int32_t rank,
                const std::string& prefix, const ExportOptions& options) {
  const std::string path = et_path(prefix, rank);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw base::InputError(base::SourceLoc{path}, "cannot create the trace file");
  }
  pb::GlobalMetadata meta;
  meta.set_version(kEtVersion);
  const RankCtx c{graph, rank, options};
  if (options.tessera_attrs) {
    fill_tessera_metadata(c, rg, meta);
  }
  write_message(meta, out, path);
  std::array<std::int64_t, kNumStreams> last{};
  last.fill(-1);
  pb::Node node;
  for (NodeId i = 0; i < rg.size(); ++i) {
    fill_node(c, rg, i, last, node);
    write_message(node, out, path);
  }
}

void write_chakra(const ExecGraph& graph, const std::string& prefix, const ExportOptions& options) {
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    auto cls = static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(r)]);
    if (graph.class_rep[cls] != r) {
      throw base::InternalError("write_chakra: rank " + std::to_string(r) +
                                " shares the graph of rank " +
                                std::to_string(graph.class_rep[cls]) +
                                "; synthesize with share_rank_classes = false or relabel");
    }
    write_rank(graph, graph.classes[cls], r, prefix, options);
  }
  if (!graph.groups.empty()) {
    write_comm_groups(graph, comm_groups_path(prefix));
  }
}

}  // namespace tessera::graph::chakra
