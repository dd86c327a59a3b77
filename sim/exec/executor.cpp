// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/executor.h"

#include <algorithm>
#include <cstddef>

#include "sim/models/collective/algorithm.h"

namespace tessera::exec {

namespace {

std::uint64_t pack(std::uint32_t inst, graph::NodeId n) {
  return (static_cast<std::uint64_t>(inst) << 32U) | n;
}

}  // namespace

Executor::Executor(kernel::Scheduler& scheduler, models::NetworkModel& network,
                   const ExecSetup& setup)
    : scheduler_(scheduler),
      network_(network),
      setup_(setup),
      host_(setup.compute->host_bound()),
      timer_(*setup.graph, *setup.plan, *setup.paths, *setup.profile, setup.tuner) {
  handler_id_ = scheduler_.add_handler(*this);
  instances_.resize(setup.plan->instances.size());
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    InstanceState& s = instances_[i];
    s.spec = &setup.plan->instances[i];
    auto cls = static_cast<std::size_t>(s.spec->cls);
    s.graph = &setup.graph->classes[cls];
    s.index = &(*setup.index)[cls];
    s.pending.resize(s.graph->size());
    s.node_done.assign(s.graph->size(), 0);
    for (std::size_t n = 0; n < s.graph->size(); ++n) {
      s.pending[n] = s.graph->dep_begin[n + 1] - s.graph->dep_begin[n];
    }
    s.memory = s.graph->static_memory;
    s.peak_memory = s.memory;
    if (host_) {
      s.host.start(*s.graph, *setup.compute);
    }
    s.recorded = setup.record_timeline && (setup.recorded.empty() || setup.recorded[i] != 0);
    if (s.recorded) {
      s.start.assign(s.graph->size(), 0);
      record_memory(s);
    }
  }
}

void Executor::start() {
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const auto inst = static_cast<std::uint32_t>(i);
    for (std::size_t s = 0; s < graph::kNumStreams; ++s) {
      if (graph::ordered_stream(static_cast<graph::Stream>(s))) {
        try_start(inst, s);
        continue;
      }
      for (graph::NodeId n : instances_[i].index->stream_nodes[s]) {
        if (instances_[i].pending[n] == 0) {
          start_node(inst, n);
        }
      }
    }
  }
}

bool Executor::all_done() const {
  return std::all_of(instances_.begin(), instances_.end(),
                     [](const InstanceState& s) { return s.done(); });
}

void Executor::handle(const kernel::Event& e) {
  if (e.type == kNodeDone || e.type == kIssued) {
    const auto inst = static_cast<std::uint32_t>(e.payload >> 32U);
    const auto n = static_cast<graph::NodeId>(e.payload & 0xffffffffU);
    if (e.type == kIssued) {
      instances_[inst].busy.host_releases(scheduler_.now());
      run_node(inst, n);
    } else if (kernel_done(inst, n)) {
      finish_node(inst, n);
    }
  } else {
    finish_op(static_cast<std::uint32_t>(e.payload));
  }
}

void Executor::on_transfer_done(std::uint64_t token) {
  const auto op_id = static_cast<std::uint32_t>(token);
  CommOp& op = rendezvous_.op(op_id);
  if (op.next_stage < op.later.size()) {  // a staged collective's next stage
    const StageTransfer& next = op.later[op.next_stage++];
    network_.start(next.path, next.bytes, *this, op_id);
    return;
  }
  scheduler_.schedule_after(op.latency, handler_id_, kCommDone, op_id);
}

void Executor::try_start(std::uint32_t inst, std::size_t stream) {
  InstanceState& s = instances_[inst];
  const auto& list = s.index->stream_nodes[stream];
  if (s.head_started[stream] || s.head[stream] >= list.size()) {
    return;
  }
  graph::NodeId n = list[s.head[stream]];
  if (s.pending[n] > 0) {
    return;
  }
  s.head_started[stream] = true;
  start_node(inst, n);
}

// A node whose dependencies have finished runs once the host thread has issued it.
void Executor::start_node(std::uint32_t inst, graph::NodeId n) {
  if (!host_) {
    run_node(inst, n);
    return;
  }
  InstanceState& s = instances_[inst];
  const base::SimTime at = s.host.issued(n);
  if (at == HostThread::kNotIssued) {
    s.busy.host_holds(scheduler_.now());
    s.host_waiting.push_back(n);  // behind a sync the host still waits at
  } else if (at > scheduler_.now()) {
    s.busy.host_holds(scheduler_.now());
    scheduler_.schedule(at, handler_id_, kIssued, pack(inst, n));
  } else {
    run_node(inst, n);
  }
}

// The host waited at node n, which has now finished: the nodes that were ready before the
// host issued them start as it does.
void Executor::host_synced(std::uint32_t inst, graph::NodeId n) {
  InstanceState& s = instances_[inst];
  if (!s.host.finished(n, scheduler_.now())) {
    return;
  }
  std::vector<graph::NodeId> ready;
  ready.swap(s.host_waiting);
  for (graph::NodeId r : ready) {
    s.busy.host_releases(scheduler_.now());
    start_node(inst, r);
  }
}

void Executor::run_node(std::uint32_t inst, graph::NodeId n) {
  const graph::Node& node = instances_[inst].node(n);
  if (node.kind != graph::NodeKind::kCompute) {
    arrive(inst, n);
    return;
  }
  begin_node(inst, n);
  // Skewed MoE routing: expert work at this rank's load (graph/expert_loads.h).
  const double f = load_factor(instances_[inst], node);
  const base::SimTime d =
      f == 1.0 ? setup_.compute->duration(node) : setup_.compute->duration(loaded_node(node, f));
  if (setup_.interference) {
    start_kernel(inst, n, d);
    return;
  }
  instances_[inst].compute_by_class[static_cast<std::size_t>(node.op)] += d;
  scheduler_.schedule_after(d, handler_id_, kNodeDone, pack(inst, n));
}

// Interference: the kernel runs at the rate the collectives in flight leave it, re-timed
// whenever they change (change_load); its time by class is what it took.
void Executor::start_kernel(std::uint32_t inst, graph::NodeId n, base::SimTime d) {
  InstanceState& s = instances_[inst];
  const double rate =
      s.load.idle() ? 1.0
                    : interfered_rate(s.node(n), *setup_.profile, s.load.total(*setup_.profile));
  const base::SimTime end = s.kernels.start(n, d, rate, scheduler_.now());
  scheduler_.schedule(end, handler_id_, kNodeDone, pack(inst, n));
}

// Whether a compute node's done event is its live one (without interference: always).
bool Executor::kernel_done(std::uint32_t inst, graph::NodeId n) {
  InstanceState& s = instances_[inst];
  if (!setup_.interference || s.node(n).kind != graph::NodeKind::kCompute) {
    return true;
  }
  base::SimTime started = 0;
  if (!s.kernels.finish(n, scheduler_.now(), started)) {
    return false;  // re-timed since: a later event finishes it
  }
  s.compute_by_class[static_cast<std::size_t>(s.node(n).op)] += scheduler_.now() - started;
  return true;
}

void Executor::change_load(std::uint32_t inst, const graph::Node& coll, bool begins, int sms) {
  InstanceState& s = instances_[inst];
  const hw::Profile& p = *setup_.profile;
  const graph::Group& group =
      setup_.graph->groups[static_cast<std::size_t>(s.spec->group(coll.group))];
  const CollectiveLoad l = collective_load(coll, group, p, sms, setup_.devices_per_node);
  if (begins) {
    s.load.add(l);
  } else {
    s.load.remove(l);
  }
  const CollectiveLoad total = s.load.total(p);
  const bool idle = s.load.idle();
  moved_.clear();
  s.kernels.rerate(
      scheduler_.now(),
      [&](graph::NodeId k) { return idle ? 1.0 : interfered_rate(s.node(k), p, total); }, moved_);
  for (const RunningKernels::Moved& m : moved_) {
    scheduler_.schedule(m.end, handler_id_, kNodeDone, pack(inst, m.node));
  }
}

void Executor::arrive(std::uint32_t inst, graph::NodeId n) {
  const InstanceState& s = instances_[inst];
  const graph::Node& node = s.node(n);
  const SharingPlan& plan = *setup_.plan;
  std::uint32_t op = Rendezvous::kNotReady;
  if (node.kind == graph::NodeKind::kCollective) {
    auto group = static_cast<std::size_t>(s.spec->group(node.group));
    std::int32_t match = plan.match_of_group[group];
    op = rendezvous_.arrive_collective(
        {inst, n}, match, s.index->coll_seq[n],
        static_cast<std::uint32_t>(plan.required[static_cast<std::size_t>(match)]));
  } else {
    auto other = static_cast<std::uint32_t>(
        plan.instance_of_rank[static_cast<std::size_t>(s.spec->peer(node.peer))]);
    bool is_send = node.kind == graph::NodeKind::kSend;
    P2PKey key = is_send ? P2PKey{inst, other, node.tag} : P2PKey{other, inst, node.tag};
    if (setup_.eager_sends && arrive_eager(inst, n, is_send, key)) {
      return;
    }
    op = rendezvous_.arrive_p2p({inst, n}, is_send, key);
  }
  if (op != Rendezvous::kNotReady) {
    launch(op);
  }
}

// Eager sends: a send with no recv waiting starts at once; a recv takes a message that was
// already delivered (at once) or one still in flight (finishing with it). Returns false
// when the arrival goes through the ordinary rendezvous.
bool Executor::arrive_eager(std::uint32_t inst, graph::NodeId n, bool is_send, const P2PKey& key) {
  if (is_send) {
    if (rendezvous_.recv_waiting(key)) {
      return false;
    }
    std::uint32_t id = rendezvous_.open_eager({inst, n});
    if (eager_key_.size() <= id) {
      eager_key_.resize(id + 1);
    }
    eager_key_[id] = key;
    in_flight_.push(key, id);
    launch(id);
    return true;
  }
  if (auto d = delivered_.find(key); d != delivered_.end()) {
    if (--d->second == 0) {
      delivered_.erase(d);
    }
    begin_node(inst, n);
    scheduler_.schedule(scheduler_.now(), handler_id_, kNodeDone, pack(inst, n));
    return true;
  }
  if (const std::uint32_t id = in_flight_.front(key); id != OpQueues::kNone) {
    in_flight_.remove(key, id);
    rendezvous_.op(id).waiters.push_back({inst, n});
    begin_node(inst, n);
    return true;
  }
  return false;
}

void Executor::launch(std::uint32_t op_id) {
  CommOp& op = rendezvous_.op(op_id);
  CommTiming t = timer_.time(op, instances_);
  op.sms = t.resources.sms;
  op.later = std::move(t.later);
  op.next_stage = 0;
  op.started = scheduler_.now();
  const bool coll = !op.p2p && t.fixed < 0;
  op.algorithm = coll ? models::builtin_collectives().at(t.resources.algorithm).name() : "";
  op.protocol = coll ? models::protocol_name(t.resources.protocol) : "";
  for (const Waiter& w : op.waiters) {
    begin_node(w.instance, w.node, op.sms);
  }
  if (t.fixed >= 0) {
    scheduler_.schedule_after(t.fixed, handler_id_, kCommDone, op_id);
  } else if (t.path != models::kNoPath && t.bytes_per_flow > 0.0) {
    op.latency = t.latency;
    network_.start(t.path, t.bytes_per_flow, *this, op_id);
  } else {
    scheduler_.schedule_after(t.latency, handler_id_, kCommDone, op_id);
  }
}

graph::GroupKind Executor::comm_kind(const InstanceState& s, const graph::Node& n) const {
  if (n.kind != graph::NodeKind::kCollective) {
    return graph::GroupKind::kPP;
  }
  return setup_.graph->groups[static_cast<std::size_t>(s.spec->group(n.group))].kind;
}

void Executor::begin_node(std::uint32_t inst, graph::NodeId n, int sms) {
  InstanceState& s = instances_[inst];
  const graph::Node& node = s.node(n);
  const base::SimTime now = scheduler_.now();
  s.memory += node.mem_alloc;
  s.comm_memory += node.comm_alloc;
  if (s.memory > s.peak_memory) {
    s.peak_memory = s.memory;
    s.peak_comm = s.comm_memory;
    if (setup_.stop_above_memory > 0.0 &&
        static_cast<double>(s.peak_memory) > setup_.stop_above_memory) {
      throw sim::MemoryLimit(s.spec->rank, static_cast<double>(s.peak_memory));
    }
  }
  if (s.recorded && node.mem_alloc != 0) {
    record_memory(s);
  }
  if (node.kind == graph::NodeKind::kCompute) {
    s.busy.begin_compute(now);
  } else {
    s.busy.begin_comm(comm_kind(s, node), now);
    if (setup_.interference && node.kind == graph::NodeKind::kCollective) {
      change_load(inst, node, true, sms);
    }
  }
  if (s.recorded) {
    s.start[n] = now;
  }
}

void Executor::finish_node(std::uint32_t inst, graph::NodeId n, int sms) {
  InstanceState& s = instances_[inst];
  const graph::Node& node = s.node(n);
  const base::SimTime now = scheduler_.now();
  s.memory -= node.mem_free;
  s.comm_memory -= node.comm_free;
  if (s.recorded && node.mem_free != 0) {
    record_memory(s);
  }
  if (node.kind == graph::NodeKind::kCompute) {
    s.busy.end_compute(now);
    s.flops += node.flops * load_factor(s, node);
  } else {
    s.busy.end_comm(comm_kind(s, node), now);
    if (setup_.interference && node.kind == graph::NodeKind::kCollective) {
      change_load(inst, node, false, sms);
    }
  }
  s.end = now;
  ++s.finished;
  if (s.recorded) {
    record_span(s, n);
  }
  s.node_done[n] = 1;
  if (host_ && node.host_sync) {
    host_synced(inst, n);
  }
  auto stream = static_cast<std::size_t>(stream_index(node.stream));
  const auto& list = s.index->stream_nodes[stream];
  const bool ordered = graph::ordered_stream(node.stream);
  if (ordered) {
    ++s.head[stream];
    s.head_started[stream] = false;
  } else {  // head: the oldest unfinished node, for deadlock reports
    while (s.head[stream] < list.size() && s.node_done[list[s.head[stream]]] != 0) {
      ++s.head[stream];
    }
  }
  for (std::uint32_t i = s.index->out_begin[n]; i < s.index->out_begin[n + 1]; ++i) {
    graph::NodeId d = s.index->out[i];
    if (--s.pending[d] == 0 && s.at_head(d)) {
      if (graph::ordered_stream(s.index->stream[d])) {
        try_start(inst, static_cast<std::size_t>(stream_index(s.index->stream[d])));
      } else {
        start_node(inst, d);
      }
    }
  }
  if (ordered) {
    try_start(inst, stream);
  }
}

void Executor::finish_op(std::uint32_t op_id) {
  const CommOp& done = rendezvous_.op(op_id);
  if (done.eager && done.waiters.size() == 1) {  // delivered before its recv was posted
    const P2PKey& key = eager_key_[op_id];
    in_flight_.remove(key, op_id);
    ++delivered_[key];
  }
  scratch_waiters_ = done.waiters;  // finishing nodes may open new ops
  const int sms = done.sms;
  finishing_algorithm_ = done.algorithm;
  finishing_protocol_ = done.protocol;
  if (!done.algorithm.empty()) {
    count_use(done);
  }
  rendezvous_.release(op_id);
  for (const Waiter& w : scratch_waiters_) {
    finish_node(w.instance, w.node, sms);
  }
}

void Executor::record_span(const InstanceState& s, graph::NodeId n) {
  const graph::Node& node = s.node(n);
  sim::Span span;
  span.rank = s.spec->rank;
  span.stream = node.stream;
  span.name = node.name;
  span.microbatch = node.microbatch;
  span.start = s.start[n];
  span.end = scheduler_.now();
  span.bytes = node.bytes;
  span.flops = node.kind == graph::NodeKind::kCompute ? node.flops : 0.0;
  span.kind = node.kind;
  span.op = node.op;
  span.group = node.kind == graph::NodeKind::kCompute ? graph::GroupKind::kTP : comm_kind(s, node);
  if (node.kind == graph::NodeKind::kCollective) {
    span.algorithm = finishing_algorithm_;
    span.protocol = finishing_protocol_;
  }
  spans_.push_back(span);
}

void Executor::count_use(const CommOp& op) {
  const auto rank0 = static_cast<std::uint32_t>(setup_.plan->instance_of_rank.front());
  for (const Waiter& w : op.waiters) {
    if (w.instance != rank0) {
      continue;
    }
    const InstanceState& s = instances_[w.instance];
    const graph::Node& node = s.node(w.node);
    const graph::GroupKind kind = comm_kind(s, node);
    sim::CollectiveUse& u = uses_[UseKey{static_cast<int>(kind), static_cast<int>(node.coll),
                                         op.algorithm, op.protocol}];
    u.kind = kind;
    u.type = node.coll;
    u.algorithm = op.algorithm;
    u.protocol = op.protocol;
    ++u.calls;
    u.time_s += base::to_seconds(scheduler_.now() - op.started);
  }
}

std::vector<sim::CollectiveUse> Executor::rank0_collectives() const {
  std::vector<sim::CollectiveUse> out;
  out.reserve(uses_.size());
  for (const auto& [key, use] : uses_) {
    out.push_back(use);
  }
  return out;
}

// Memory samples at one time collapse into the last (the timeline shows where it settles).
void Executor::record_memory(const InstanceState& s) {
  const base::SimTime now = scheduler_.now();
  if (!memory_.empty() && memory_.back().rank == s.spec->rank && memory_.back().time == now) {
    memory_.back().bytes = s.memory;
    return;
  }
  memory_.push_back({s.spec->rank, now, s.memory});
}

}  // namespace tessera::exec
