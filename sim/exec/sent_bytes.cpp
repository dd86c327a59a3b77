// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sent_bytes.h"

namespace tessera::exec {

double ring_sent_bytes(graph::CollType c, int n, double bytes) {
  if (n <= 1) {
    return 0.0;
  }
  const double nd = n;
  switch (c) {
    case graph::CollType::kAllReduce:
      return 2.0 * (nd - 1.0) / nd * bytes;
    case graph::CollType::kAllGather:
    case graph::CollType::kReduceScatter:
    case graph::CollType::kAllToAll:
      return (nd - 1.0) / nd * bytes;
    case graph::CollType::kBroadcast:
    case graph::CollType::kSendRecv:
      return bytes;
  }
  return 0.0;
}

namespace {

// A class graph's group ids are its representative's; relabelled groups of the same class
// have the same kind and size, so the figure holds for every rank of the class.
SentBytes sent_by(const graph::ExecGraph& g, const graph::RankGraph& rg) {
  SentBytes out{};
  for (const graph::Node& n : rg.nodes) {
    if (n.kind == graph::NodeKind::kSend) {
      out[static_cast<std::size_t>(graph::GroupKind::kPP)] += n.bytes;
    } else if (n.kind == graph::NodeKind::kCollective) {
      const graph::Group& grp = g.groups[static_cast<std::size_t>(n.group)];
      out[static_cast<std::size_t>(grp.kind)] +=
          ring_sent_bytes(n.coll, static_cast<int>(grp.ranks.size()), n.bytes);
    }
  }
  return out;
}

}  // namespace

std::vector<SentBytes> sent_bytes_per_class(const graph::ExecGraph& g) {
  std::vector<SentBytes> out;
  out.reserve(g.classes.size());
  for (const graph::RankGraph& rg : g.classes) {
    out.push_back(sent_by(g, rg));
  }
  return out;
}

}  // namespace tessera::exec
