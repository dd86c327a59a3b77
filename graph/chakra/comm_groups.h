// SPDX-License-Identifier: Apache-2.0
// Communicator groups beside a Chakra trace: the JSON ASTRA-sim reads ({"1": [0,1,2,3], ...},
// group id -> sorted member ranks) and the table that resolves a node's pg_name to a group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/chakra/et_trace.h"
#include "graph/exec_graph.h"

namespace tessera::graph::chakra {

// Group id (as text) -> member ranks, ascending.
using CommGroups = std::map<std::string, std::vector<std::int32_t>>;

std::string comm_groups_path(const std::string& prefix);  // "<prefix>.groups.json"

// The pg_name the writer gives ExecGraph group `group`: its index + 1 ("0" means all ranks).
std::string pg_name_of(std::int32_t group);

// Writes every group of `graph` under pg_name_of(index), members sorted ascending.
void write_comm_groups(const ExecGraph& graph, const std::string& path);

// Throws base::InputError naming the file on bad JSON, a non-list value, a rank outside
// [0, num_ranks), a duplicate member, or an empty group.
CommGroups read_comm_groups(const std::string& path, std::int32_t num_ranks);

// Contract: use() maps a collective's pg_name ("" reads as "0") to a provisional group index
// and records the rank using it; finish() then builds ExecGraph groups, ordered by numeric
// id. Members: the JSON's list when it has the id; else all ranks for "0"; else (no JSON
// entry) the ranks whose traces use that pg_name: the inferred group. use() throws
// base::InputError when the JSON lists the id without the using rank.
class GroupTable {
 public:
  GroupTable(std::optional<CommGroups> json, std::string json_path, std::int32_t num_ranks);
  std::int32_t use(const std::string& pg_name, std::int32_t rank, const EtTrace& t,
                   const EtNode& n);
  // Appends the groups to graph.groups and returns provisional index -> final index.
  std::vector<std::int32_t> finish(ExecGraph& graph) const;
  // The pg_names seen, by provisional index.
  [[nodiscard]] const std::vector<std::string>& ids() const { return names_; }

 private:
  [[nodiscard]] std::vector<std::int32_t> members(std::size_t index) const;

  std::optional<CommGroups> json_;
  std::string json_path_;
  std::int32_t num_ranks_ = 0;
  std::map<std::string, std::int32_t> index_of_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::int32_t>> users_;  // per provisional index, ascending
};

}  // namespace tessera::graph::chakra
