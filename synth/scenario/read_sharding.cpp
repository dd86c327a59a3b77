// SPDX-License-Identifier: Apache-2.0
// `parallelism:`'s keys for the sequence and the data-parallel state: context parallelism
// (cp, cp_comm; docs/context_parallel.md) and sharded data parallelism (zero, dp_shard;
// docs/sharded_data_parallel.md).
#include <array>

#include "synth/scenario/readers.h"

namespace tessera::synth::reader {

void read_context_parallel(const base::YamlNode& n, ParallelConfig& p) {
  p.cp = n.has("cp") ? n.at("cp").as_int(1, kMaxDevices) : 1;
  constexpr std::array<std::string_view, 3> kCpComm = {"p2p", "allgather", "a2a"};
  if (auto v = n.find("cp_comm")) {
    const std::string c = v->as_choice(kCpComm);
    p.cp_comm = c == "p2p" ? CpComm::kP2P : c == "allgather" ? CpComm::kAllGather : CpComm::kA2A;
  }
}

// zero: 0 | 1 | 2 | 3; dp_shard: the shard group's data-parallel ranks (HSDP when it leaves
// more than one replica).
void read_sharded_data_parallel(const base::YamlNode& n, ParallelConfig& p) {
  if (auto v = n.find("zero")) {
    p.zero = v->as_int(0, 3);
  }
  if (auto v = n.find("dp_shard")) {
    p.dp_shard = v->as_int(1, kMaxDevices);
  }
}

}  // namespace tessera::synth::reader
