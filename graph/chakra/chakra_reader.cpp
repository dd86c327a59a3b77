// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/chakra_reader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "base/error.h"
#include "graph/chakra/comm_groups.h"
#include "graph/chakra/et_convert.h"
#include "graph/chakra/et_decode.h"
#include "graph/chakra/tessera_attrs.h"

namespace tessera::graph::chakra {

namespace {

std::int32_t count_ranks(const std::string& prefix) {
  std::int32_t n = 0;
  std::error_code ec;  // an unusable path counts as no file
  while (std::filesystem::exists(et_path(prefix, n), ec)) {
    ++n;
  }
  if (n == 0) {
    throw base::InputError(
        base::SourceLoc{et_path(prefix, 0)}, "no Chakra trace found",
        "expected one file per rank: " + et_path(prefix, 0) + ", " + et_path(prefix, 1) + ", ...");
  }
  return n;
}

GroupTable load_groups(const std::string& prefix, std::int32_t num_ranks) {
  const std::string path = comm_groups_path(prefix);
  std::optional<CommGroups> json;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    json = read_comm_groups(path, num_ranks);
  }
  return GroupTable(std::move(json), path, num_ranks);
}

// A group as the tessera.group_* metadata describes it.
struct TesseraGroup {
  std::optional<GroupKind> kind;
  std::vector<std::int32_t> ring;
  std::string path;  // the trace that said so, for messages
};

// What one trace's GlobalMetadata says beyond the version (tessera_attrs.h).
struct TesseraMeta {
  const EtAttr* find(std::string_view name) const {
    for (const EtAttr& a : *attrs) {
      if (a.name == name) {
        return &a;
      }
    }
    return nullptr;
  }
  const std::vector<EtAttr>* attrs;
};

[[noreturn]] void bad_meta(const EtTrace& t, const EtAttr& a, const std::string& what) {
  throw base::InputError(base::SourceLoc{t.path},
                         "GlobalMetadata attribute '" + a.name + "' " + what);
}

std::int64_t meta_int(const EtTrace& t, const TesseraMeta& m, const char* name,
                      std::int64_t fallback) {
  const EtAttr* a = m.find(name);
  if (a == nullptr) {
    return fallback;
  }
  if (a->kind != AttrKind::kInt) {
    bad_meta(t, *a, "is not an integer");
  }
  return a->int_val;
}

double meta_double(const EtTrace& t, const TesseraMeta& m, const char* name, double fallback) {
  const EtAttr* a = m.find(name);
  if (a == nullptr) {
    return fallback;
  }
  if (a->kind != AttrKind::kFloat) {
    bad_meta(t, *a, "is not a floating-point value");
  }
  return a->float_val;
}

// Rank-level metadata into `rg`, step-level into `g.info` (from the first rank), groups
// into `groups` (pg_name -> kind and ring).
void apply_metadata(const EtTrace& t, RankGraph& rg, ExecGraph& g, bool first,
                    std::map<std::string, TesseraGroup>& groups, ImportInfo& info) {
  const TesseraMeta m{&t.metadata};
  const EtAttr* producer = m.find(tattr::kProducer);
  if (producer == nullptr || producer->string_val != "tessera") {
    return;
  }
  rg.stage = static_cast<std::int32_t>(meta_int(t, m, tattr::kStage, rg.stage));
  rg.static_memory = meta_int(t, m, tattr::kStaticMemory, rg.static_memory);
  rg.weight_memory = meta_int(t, m, tattr::kWeightMemory, rg.weight_memory);
  rg.grad_memory = meta_int(t, m, tattr::kGradMemory, rg.grad_memory);
  if (first) {
    info.tessera = true;
    if (const EtAttr* p = m.find(tattr::kPrecision)) {
      info.precision = tattr::parse_dtype(p->string_val).value_or(info.precision);
    }
    g.info.model_flops = meta_double(t, m, tattr::kModelFlops, 0.0);
    g.info.hardware_flops = meta_double(t, m, tattr::kHardwareFlops, 0.0);
    g.info.tokens = meta_double(t, m, tattr::kTokens, 0.0);
    g.info.causal_attention_flops = meta_double(t, m, tattr::kCausalAttentionFlops, 0.0);
    g.info.cuda_graphs = meta_int(t, m, tattr::kCudaGraphs, 0) != 0;
    g.info.attention_fa2 = meta_int(t, m, tattr::kAttentionFa2, 0) != 0;
    g.info.fp8_block_scaled = meta_int(t, m, tattr::kFp8BlockScaled, 0) != 0;
    if (const EtAttr* c = m.find(tattr::kFlopsConvention)) {
      g.info.flops_convention = c->string_val;
    }
  }
  for (const EtAttr& a : t.metadata) {
    std::string_view name = a.name;
    if (name.rfind(tattr::kGroupKindPrefix, 0) == 0) {
      TesseraGroup& grp = groups[std::string(name.substr(tattr::kGroupKindPrefix.size()))];
      grp.kind = tattr::parse_group_kind(a.string_val);
      if (!grp.kind) {
        bad_meta(t, a, "names an unknown group kind '" + a.string_val + "'");
      }
    } else if (name.rfind(tattr::kGroupRanksPrefix, 0) == 0) {
      if (a.kind != AttrKind::kList) {
        bad_meta(t, a, "is not a list of ranks");
      }
      TesseraGroup& grp = groups[std::string(name.substr(tattr::kGroupRanksPrefix.size()))];
      grp.ring.assign(a.int_list.begin(), a.int_list.end());
      grp.path = t.path;
    }
  }
}

// Kind and ring order from the tessera.group_* metadata, where a trace gave them; the ring
// must hold exactly the group's members.
void apply_group_meta(ExecGraph& g, const GroupTable& table, const std::vector<std::int32_t>& remap,
                      const std::map<std::string, TesseraGroup>& meta) {
  const std::vector<std::string>& ids = table.ids();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto it = meta.find(ids[i]);
    if (it == meta.end()) {
      continue;
    }
    Group& grp = g.groups[static_cast<std::size_t>(remap[i])];
    if (it->second.kind) {
      grp.kind = *it->second.kind;
    }
    if (!it->second.ring.empty()) {
      std::vector<std::int32_t> sorted = it->second.ring;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::int32_t> members = grp.ranks;
      std::sort(members.begin(), members.end());
      if (sorted != members) {
        throw base::InputError(
            base::SourceLoc{it->second.path},
            "tessera.group_ranks." + ids[i] + " does not list the members of group " + ids[i]);
      }
      grp.ranks = it->second.ring;
    }
  }
}

// Final group indices, and all-gather sizes from per-rank shards to the gathered buffer
// (except where tessera.bytes gave the exact size: exact_bytes, per rank).
void finish_groups(ExecGraph& g, const GroupTable& table,
                   const std::vector<std::vector<NodeId>>& exact_bytes,
                   const std::map<std::string, TesseraGroup>& meta) {
  const std::vector<std::int32_t> remap = table.finish(g);
  apply_group_meta(g, table, remap, meta);
  for (std::size_t r = 0; r < g.classes.size(); ++r) {
    RankGraph& rg = g.classes[r];
    const std::vector<NodeId>& exact = exact_bytes[r];
    for (NodeId i = 0; i < rg.size(); ++i) {
      Node& n = rg.nodes[i];
      if (n.kind != NodeKind::kCollective) {
        continue;
      }
      n.group = remap[static_cast<std::size_t>(n.group)];
      if (n.coll == CollType::kAllGather && !std::binary_search(exact.begin(), exact.end(), i)) {
        n.bytes *= static_cast<double>(g.groups[static_cast<std::size_t>(n.group)].ranks.size());
      }
    }
  }
}

void fill_info(ExecGraph& g) {
  for (const RankGraph& rg : g.classes) {
    for (const Node& n : rg.nodes) {
      g.info.hardware_flops += n.flops;
    }
  }
  g.info.model_flops = g.info.hardware_flops;
  g.info.flops_convention = "sum of the trace's num_ops";
}

// One rank at a time, so that only one rank's trace is in memory.
// Every rank's trace converted, its Tessera metadata applied (exact attributes of traces we
// wrote), the groups finished.
ExecGraph assemble(const std::function<EtTrace(std::int32_t)>& rank_trace, const ImportOptions& o,
                   GroupTable& groups, ImportInfo* info) {
  ExecGraph g;
  g.num_ranks = o.num_ranks;
  ImportInfo origin;
  std::map<std::string, TesseraGroup> group_meta;
  std::vector<std::vector<NodeId>> exact_bytes(static_cast<std::size_t>(o.num_ranks));
  for (std::int32_t r = 0; r < o.num_ranks; ++r) {
    const EtTrace t = rank_trace(r);
    auto& exact = exact_bytes[static_cast<std::size_t>(r)];
    g.classes.push_back(convert_rank(t, r, groups, g, o, &exact));
    std::sort(exact.begin(), exact.end());
    apply_metadata(t, g.classes.back(), g, r == 0, group_meta, origin);
    g.class_of_rank.push_back(r);
    g.class_rep.push_back(r);
  }
  finish_groups(g, groups, exact_bytes, group_meta);
  if (!origin.tessera) {
    fill_info(g);
  }
  if (info != nullptr) {
    *info = origin;
  }
  return g;
}

}  // namespace

std::string et_path(const std::string& prefix, std::int32_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

EtTrace read_et_file(const std::string& path) {
  return decode_et(load_file(path), path);
}

ExecGraph read_chakra(const std::string& prefix, const ImportOptions& options, ImportInfo* info) {
  ImportOptions o = options;
  if (o.num_ranks <= 0) {
    o.num_ranks = count_ranks(prefix);
  }
  GroupTable groups = load_groups(prefix, o.num_ranks);
  return assemble([&](std::int32_t r) { return read_et_file(et_path(prefix, r)); }, o, groups,
                  info);
}

ExecGraph import_chakra(const std::function<EtTrace(std::int32_t)>& rank_trace,
                        const ImportOptions& options, std::optional<CommGroups> groups) {
  if (options.num_ranks <= 0) {
    throw base::InputError("import_chakra: the number of ranks must be positive");
  }
  GroupTable table(std::move(groups), "<communicator groups>", options.num_ranks);
  return assemble(rank_trace, options, table, nullptr);
}

}  // namespace tessera::graph::chakra
