// SPDX-License-Identifier: Apache-2.0
#include "synth/graph/chakra/chakra_reader.h"

#include <filesystem>
#include <optional>

#include "sim/base/error.h"
#include "synth/graph/chakra/comm_groups.h"
#include "synth/graph/chakra/et_convert.h"
#include "synth/graph/chakra/et_decode.h"

namespace tessera::graph::chakra {

namespace {

std::int32_t count_ranks(const std::string& prefix) {
  std::int32_t n = 0;
  while (std::filesystem::exists(et_path(prefix, n))) {
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
  if (std::filesystem::exists(path)) {
    json = read_comm_groups(path, num_ranks);
  }
  return GroupTable(std::move(json), path, num_ranks);
}

// Final group indices, and all-gather sizes from per-rank shards to the gathered buffer.
void finish_groups(ExecGraph& g, const GroupTable& table) {
  const std::vector<std::int32_t> remap = table.finish(g);
  for (RankGraph& rg : g.classes) {
    for (Node& n : rg.nodes) {
      if (n.kind != NodeKind::kCollective) {
        continue;
      }
      n.group = remap[static_cast<std::size_t>(n.group)];
      if (n.coll == CollType::kAllGather) {
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
ExecGraph assemble(const std::function<EtTrace(std::int32_t)>& rank_trace, const ImportOptions& o,
                   GroupTable& groups) {
  ExecGraph g;
  g.num_ranks = o.num_ranks;
  for (std::int32_t r = 0; r < o.num_ranks; ++r) {
    g.classes.push_back(convert_rank(rank_trace(r), r, groups, g, o));
    g.class_of_rank.push_back(r);
    g.class_rep.push_back(r);
  }
  finish_groups(g, groups);
  fill_info(g);
  return g;
}

}  // namespace

std::string et_path(const std::string& prefix, std::int32_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

EtTrace read_et_file(const std::string& path) {
  return decode_et(load_file(path), path);
}

ExecGraph read_chakra(const std::string& prefix, const ImportOptions& options) {
  ImportOptions o = options;
  if (o.num_ranks <= 0) {
    o.num_ranks = count_ranks(prefix);
  }
  GroupTable groups = load_groups(prefix, o.num_ranks);
  return assemble([&](std::int32_t r) { return read_et_file(et_path(prefix, r)); }, o, groups);
}

ExecGraph import_chakra(const std::function<EtTrace(std::int32_t)>& rank_trace,
                        const ImportOptions& options, std::optional<CommGroups> groups) {
  if (options.num_ranks <= 0) {
    throw base::InputError("import_chakra: the number of ranks must be positive");
  }
  GroupTable table(std::move(groups), "<communicator groups>", options.num_ranks);
  return assemble(rank_trace, options, table);
}

}  // namespace tessera::graph::chakra
