// SPDX-License-Identifier: Apache-2.0
// The graph executor: issues each instance's nodes stream by stream as their dependencies
// finish, times compute nodes with the compute model, meets communication nodes with their
// partners and times them with the network model, and keeps memory and busy-time accounts.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/exec/comm_timer.h"
#include "sim/exec/instance_state.h"
#include "sim/exec/rendezvous.h"
#include "sim/kernel/scheduler.h"
#include "sim/models/compute/compute_model.h"
#include "sim/models/network/network_model.h"
#include "sim/run_stats.h"

namespace tessera::exec {

struct ExecSetup {
  const graph::ExecGraph* graph = nullptr;
  const SharingPlan* plan = nullptr;
  const std::vector<GraphIndex>* index = nullptr;  // per rank class
  const CommPaths* paths = nullptr;
  const models::ComputeModel* compute = nullptr;
  const hw::Profile* profile = nullptr;
  int devices_per_node = 0;  // the job's devices in one node (topology::Cluster); 0: profile's
  bool record_timeline = false;
  std::vector<char> recorded;  // with record_timeline, per instance (empty: all of them)
  // Sends start without waiting for their recv and complete on delivery (ASTRA-sim's
  // semantics, for imported traces); off: a send and its recv meet first (NCCL rendezvous).
  bool eager_sends = false;
  models::TunerOptions tuner;  // the collective tuner's switches (effects)
  // Compute kernels slow down while a collective shares the device (interference.h; the
  // "comm-interference" effect).
  bool interference = false;
  // Stop at the first instant a rank holds more than this many bytes (0: never): MemoryLimit.
  double stop_above_memory = 0.0;
};

// Contract: a node starts when it heads its stream, its dependencies have finished and the
// rank's host thread has issued it (host_thread.h; when the compute model is host-bound); a
// communication node then waits for its partners, and the met op starts and ends for all
// of them at once. start() issues the t = 0 work; the scheduler's run() does the rest. When
// the run drains, all_done() says whether every node finished (else: a deadlock).
class Executor final : public kernel::EventHandler, public models::TransferListener {
 public:
  Executor(kernel::Scheduler& scheduler, models::NetworkModel& network, const ExecSetup& setup);
  void start();
  void handle(const kernel::Event& e) override;
  void on_transfer_done(std::uint64_t token) override;

  [[nodiscard]] bool all_done() const;
  [[nodiscard]] const std::vector<InstanceState>& instances() const { return instances_; }
  [[nodiscard]] const Rendezvous& rendezvous() const { return rendezvous_; }
  [[nodiscard]] std::vector<sim::Span>& spans() { return spans_; }
  [[nodiscard]] std::vector<sim::MemorySample>& memory_samples() { return memory_; }
  // Rank 0's collectives by kind, type, algorithm and protocol, in that order.
  [[nodiscard]] std::vector<sim::CollectiveUse> rank0_collectives() const;

 private:
  // kIssued: the host thread issues a node that was ready before it.
  enum EventType : std::uint32_t { kNodeDone = 0, kCommDone = 1, kIssued = 2 };

  void try_start(std::uint32_t inst, std::size_t stream);
  void start_node(std::uint32_t inst, graph::NodeId n);
  void run_node(std::uint32_t inst, graph::NodeId n);
  void host_synced(std::uint32_t inst, graph::NodeId n);
  void arrive(std::uint32_t inst, graph::NodeId n);
  void launch(std::uint32_t op_id);
  // `sms`: what a collective node holds while it runs (the tuner's choice; 0 otherwise).
  void begin_node(std::uint32_t inst, graph::NodeId n, int sms = 0);
  void finish_node(std::uint32_t inst, graph::NodeId n, int sms = 0);
  void finish_op(std::uint32_t op_id);
  [[nodiscard]] graph::GroupKind comm_kind(const InstanceState& s, const graph::Node& n) const;
  [[nodiscard]] double load_factor(const InstanceState& s, const graph::Node& n) const {
    return exec::load_factor(s, setup_.graph->expert_loads, n);
  }
  void record_span(const InstanceState& s, graph::NodeId n);
  void record_memory(const InstanceState& s);
  void count_use(const CommOp& op);
  void start_kernel(std::uint32_t inst, graph::NodeId n, base::SimTime d);
  bool kernel_done(std::uint32_t inst, graph::NodeId n);
  void change_load(std::uint32_t inst, const graph::Node& coll, bool begins, int sms);

  kernel::Scheduler& scheduler_;
  models::NetworkModel& network_;
  ExecSetup setup_;
  bool host_ = false;  // the compute model has a host thread issue the nodes (host_thread.h)
  CommTimer timer_;
  std::uint32_t handler_id_ = 0;
  std::vector<InstanceState> instances_;
  Rendezvous rendezvous_;
  std::vector<Waiter> scratch_waiters_;
  std::string_view finishing_algorithm_;  // the op finish_op is finishing (its spans' labels)
  std::string_view finishing_protocol_;
  // Eager sends: ops in flight whose recv is not posted yet, and delivered messages waiting
  // for their recv, per (source, destination, tag); the key of each eager op.
  OpQueues in_flight_;
  std::unordered_map<P2PKey, std::uint32_t, P2PKeyHash> delivered_;
  std::vector<P2PKey> eager_key_;
  bool arrive_eager(std::uint32_t inst, graph::NodeId n, bool is_send, const P2PKey& key);
  std::vector<sim::Span> spans_;
  std::vector<sim::MemorySample> memory_;
  std::vector<RunningKernels::Moved> moved_;  // scratch for change_load
  using UseKey = std::tuple<int, int, std::string_view, std::string_view>;
  std::map<UseKey, sim::CollectiveUse> uses_;  // rank 0's collectives (count_use)
};

}  // namespace tessera::exec
