// SPDX-License-Identifier: Apache-2.0
#include "tests/sim/sim_test_util.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <utility>

namespace tessera::simtest {

hw::Profile test_profile() {
  hw::Profile p;
  p.name = "test";
  p.peak_flops = {1e15, 1e15, 0.0, 2e15};  // bf16, fp16, fp32 (no matrix path), fp8
  p.vector_flops = 50e12;
  p.hbm_capacity = 80e9;
  p.hbm_bandwidth = 2e12;
  p.hbm_efficiency = 1.0;
  p.reserved_memory = 0.0;
  p.devices_per_node = 8;
  p.scale_up = {100e9, 0, 1.0};
  p.scale_out = {50e9, 0, 1.0};
  return p;
}

topology::Cluster make_cluster(const hw::Profile& p, int devices, int devices_per_node) {
  topology::TopologySpec spec;
  spec.kind = "nvswitch_fat_tree";
  spec.devices_per_node = devices_per_node;
  return topology::Cluster(spec, p, devices);
}

graph::Node compute(graph::ExecGraph& g, const std::string& name, base::SimTime duration) {
  graph::Node n;
  n.name = g.intern(name);
  n.kind = graph::NodeKind::kCompute;
  n.stream = graph::Stream::kCompute;
  n.fixed_duration = duration;
  return n;
}

graph::Node collective(graph::ExecGraph& g, const std::string& name, std::int32_t group,
                       graph::CollType type, double bytes, graph::Stream s) {
  graph::Node n;
  n.name = g.intern(name);
  n.kind = graph::NodeKind::kCollective;
  n.coll = type;
  n.group = group;
  n.bytes = bytes;
  n.stream = s;
  return n;
}

namespace {

graph::Node p2p(graph::ExecGraph& g, const std::string& name, std::int32_t peer, std::int64_t tag,
                double bytes, bool is_send) {
  graph::Node n;
  n.name = g.intern(name);
  n.kind = is_send ? graph::NodeKind::kSend : graph::NodeKind::kRecv;
  n.stream = is_send ? graph::Stream::kPPSendFwd : graph::Stream::kPPRecvFwd;
  n.peer = peer;
  n.tag = tag;
  n.bytes = bytes;
  return n;
}

}  // namespace

graph::Node send(graph::ExecGraph& g, const std::string& name, std::int32_t peer, std::int64_t tag,
                 double bytes) {
  return p2p(g, name, peer, tag, bytes, true);
}

graph::Node recv(graph::ExecGraph& g, const std::string& name, std::int32_t peer, std::int64_t tag,
                 double bytes) {
  return p2p(g, name, peer, tag, bytes, false);
}

graph::RankGraph memory_walk(graph::ExecGraph& g) {
  graph::RankGraph r;
  r.static_memory = 100;
  graph::Node a = compute(g, "a", 1);
  a.mem_alloc = 50;
  graph::Node b = compute(g, "b", 1);
  b.mem_alloc = 30;
  b.mem_free = 80;
  graph::Node c = compute(g, "c", 1);
  c.mem_alloc = 60;
  c.mem_free = 60;
  r.add(a);
  r.add(b);
  r.add(c);
  return r;
}

void set_per_rank(graph::ExecGraph& g, std::vector<graph::RankGraph> graphs) {
  g.num_ranks = static_cast<std::int32_t>(graphs.size());
  g.classes = std::move(graphs);
  g.class_of_rank.clear();
  g.class_rep.clear();
  for (std::int32_t r = 0; r < g.num_ranks; ++r) {
    g.class_of_rank.push_back(r);
    g.class_rep.push_back(r);
  }
}

sim::RunStats run(const graph::ExecGraph& g, const topology::Cluster& c, const hw::Profile& p,
                  bool timeline, bool share) {
  sim::SimOptions o;
  o.record_timeline = timeline;
  o.share_rank_classes = share;
  return sim::simulate(g, c, p, o);
}

sim::Span span_of(const sim::RunStats& stats, const graph::ExecGraph& g, std::int32_t rank,
                  const std::string& name) {
  for (const sim::Span& s : stats.spans) {
    if (s.rank == rank && g.names[s.name] == name) {
      return s;
    }
  }
  ADD_FAILURE() << "no span '" << name << "' on rank " << rank;
  return {};
}

}  // namespace tessera::simtest
