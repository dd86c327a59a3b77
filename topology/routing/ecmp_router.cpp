// SPDX-License-Identifier: Apache-2.0
#include "topology/routing/ecmp_router.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tessera::topology {

namespace {

constexpr int kMaxHops = 127;  // distances are stored in one byte

// splitmix64: a fixed, platform-independent mixer (std::hash is neither).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32U) |
         static_cast<std::uint32_t>(b);
}

std::size_t pick(int src, int dst, int hop, std::size_t choices) {
  std::uint64_t h = mix(mix(pair_key(src, dst)) + static_cast<std::uint64_t>(hop));
  return static_cast<std::size_t>(h % choices);
}

int at(const std::vector<std::int8_t>& dist, std::int32_t v) {
  return dist[static_cast<std::size_t>(v)];
}

}  // namespace

bool EcmpRouter::usable(LinkId id, bool scale_up_only) const {
  return !scale_up_only || graph_.links()[static_cast<std::size_t>(id)].cls == LinkClass::kScaleUp;
}

// Breadth-first over in-edges from `dst`; `dist` must be all -1 on entry. `reached` doubles
// as the queue and lists every vertex given a distance.
void EcmpRouter::search_back_from(int dst, bool scale_up_only, Distances& dist,
                                  std::vector<std::int32_t>& reached) const {
  const Graph& g = graph_.graph();
  reached.assign(1, dst);
  dist[static_cast<std::size_t>(dst)] = 0;
  for (std::size_t head = 0; head < reached.size(); ++head) {
    std::int32_t v = reached[head];
    if ((v != dst && graph_.is_device(v)) || at(dist, v) == kMaxHops) {
      continue;  // devices are endpoints, never transit
    }
    for (auto [it, end] = boost::in_edges(static_cast<std::size_t>(v), g); it != end; ++it) {
      auto u = static_cast<std::int32_t>(boost::source(*it, g));
      if (usable(g[*it], scale_up_only) && at(dist, u) < 0) {
        dist[static_cast<std::size_t>(u)] = static_cast<std::int8_t>(at(dist, v) + 1);
        reached.push_back(u);
      }
    }
  }
}

const EcmpRouter::Distances& EcmpRouter::scale_up_distances_to(int dst) const {
  scratch_.resize(static_cast<std::size_t>(graph_.num_vertices()), -1);
  for (std::int32_t v : scratch_reached_) {
    scratch_[static_cast<std::size_t>(v)] = -1;  // undo the previous search only
  }
  search_back_from(dst, true, scratch_, scratch_reached_);
  return scratch_;
}

const EcmpRouter::Distances& EcmpRouter::distances_to(int dst) const {
  auto it = distances_.find(dst);
  if (it == distances_.end()) {
    Distances dist(static_cast<std::size_t>(graph_.num_vertices()), -1);
    std::vector<std::int32_t> reached;
    search_back_from(dst, false, dist, reached);
    it = distances_.emplace(dst, std::move(dist)).first;
  }
  return it->second;
}

std::vector<LinkId> EcmpRouter::walk(int src, int dst, const Distances& dist,
                                     bool scale_up_only) const {
  const Graph& g = graph_.graph();
  std::vector<LinkId> path;
  std::vector<LinkId> options;
  for (std::int32_t v = src; v != dst;) {
    options.clear();
    for (auto [it, end] = boost::out_edges(static_cast<std::size_t>(v), g); it != end; ++it) {
      auto w = static_cast<std::int32_t>(boost::target(*it, g));
      bool closer = at(dist, w) == at(dist, v) - 1;
      if (closer && usable(g[*it], scale_up_only) && (w == dst || !graph_.is_device(w))) {
        options.push_back(g[*it]);
      }
    }
    LinkId chosen = options[pick(src, dst, static_cast<int>(path.size()), options.size())];
    path.push_back(chosen);
    v = graph_.links()[static_cast<std::size_t>(chosen)].to;
  }
  return path;
}

void EcmpRouter::check_device(int device) const {
  if (device < 0 || device >= graph_.num_devices()) {
    throw base::InternalError(
        fmt::format("device {} out of range [0, {})", device, graph_.num_devices()));
  }
}

const std::vector<LinkId>& EcmpRouter::route(int src, int dst) const {
  static const std::vector<LinkId> kEmpty;
  check_device(src);
  check_device(dst);
  if (src == dst) {
    return kEmpty;
  }
  std::uint64_t key = pair_key(src, dst);
  if (auto it = routes_.find(key); it != routes_.end()) {
    return it->second;
  }
  const Distances& up = scale_up_distances_to(dst);
  bool scale_up_only = at(up, src) >= 0;
  const Distances& dist = scale_up_only ? up : distances_to(dst);
  if (at(dist, src) < 0) {
    throw base::InternalError(fmt::format("no route from dev{} to dev{}", src, dst));
  }
  return routes_.emplace(key, walk(src, dst, dist, scale_up_only)).first->second;
}

}  // namespace tessera::topology
