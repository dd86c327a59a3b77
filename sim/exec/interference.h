// SPDX-License-Identifier: Apache-2.0
// Compute slowed by collectives that share the device (docs/overlap.md): a collective in
// flight holds SMs (one CTA per NCCL channel) and HBM bandwidth (what it receives lands in
// HBM, what it sends is read from there), so a compute-bound kernel running beside it loses
// the SMs' share of the device and a memory-bound one the HBM share.
#pragma once

#include <algorithm>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::exec {

// What one collective in flight takes from its rank.
struct CollectiveLoad {
  int sms = 0;             // SMs its kernel's CTAs occupy
  double hbm_share = 0.0;  // share of the achievable HBM bandwidth its traffic uses
};

// The SMs a collective occupies: the graph's comm_sms when its issuer chose them (TE's
// userbuffers), else `chosen`, what the tuner's algorithm holds (sim/models/collective/
// algorithm.h Algorithm::sms: NCCL's one CTA per channel, the profile's ring channels or
// NVLS's), else the profile's ring channels.
int collective_sms(const graph::Node& coll, const hw::Profile& p, int chosen);

// The collective's load: its SMs, and its HBM traffic at the bandwidth of the slowest link
// class its group crosses (scale-up inside a node, scale-out across nodes): per byte sent it
// reads 1 byte and writes the byte it receives, and a reduction reads its local operand too.
// `per_node`: the devices of the job in one node (the cluster's; 0: the profile's).
CollectiveLoad collective_load(const graph::Node& coll, const graph::Group& group,
                               const hw::Profile& p, int chosen_sms, int per_node = 0);

// The rate (1: undisturbed) of `kernel` beside collectives holding `load` in all: a
// compute-bound kernel (its FLOPs take longer than its bytes at the profile's peaks) runs on
// the SMs left, (S - sms) / S; a memory-bound one on the HBM bandwidth left, 1 - hbm_share.
double interfered_rate(const graph::Node& kernel, const hw::Profile& p, const CollectiveLoad& load);

// The sum of the loads of the collectives in flight on one rank (capped so that compute
// always progresses).
class InterferenceState {
 public:
  void add(const CollectiveLoad& l);
  void remove(const CollectiveLoad& l);
  [[nodiscard]] CollectiveLoad total(const hw::Profile& p) const;
  [[nodiscard]] bool idle() const { return in_flight_ == 0; }

 private:
  int in_flight_ = 0;
  int sms_ = 0;
  double hbm_ = 0.0;
};

// The compute kernels in progress on one rank while interference is modelled: the
// undisturbed time each still needs and the rate it runs at, so that a change of load
// re-times them from that moment on.
class RunningKernels {
 public:
  struct Moved {
    graph::NodeId node;
    base::SimTime end;
  };
  // Kernel `n` of undisturbed duration `d` starts at `now` at `rate`; returns its end.
  base::SimTime start(graph::NodeId n, base::SimTime d, double rate, base::SimTime now);
  // The load changed at `now`: every kernel runs at rate_of(node) from here; `moved` gets
  // those whose end changed (their earlier done event is stale).
  template <typename RateOf>
  void rerate(base::SimTime now, RateOf rate_of, std::vector<Moved>& moved) {
    for (Kernel& k : kernels_) {
      const double r = rate_of(k.node);
      if (r == k.rate) {
        continue;
      }
      k.remaining = std::max(0.0, k.remaining - static_cast<double>(now - k.since) * k.rate);
      k.rate = r;
      k.since = now;
      k.end = now + to_time(k.remaining / r);
      moved.push_back({k.node, k.end});
    }
  }
  // A done event of `n` at `now`: whether it is the live one (then the kernel is removed and
  // `started` says when it began).
  bool finish(graph::NodeId n, base::SimTime now, base::SimTime& started);

 private:
  struct Kernel {
    graph::NodeId node = 0;
    double remaining = 0.0;  // ps of undisturbed work left at `since`
    double rate = 1.0;
    base::SimTime since = 0;
    base::SimTime end = 0;
    base::SimTime start = 0;
  };
  static base::SimTime to_time(double ps);
  std::vector<Kernel> kernels_;
};

}  // namespace tessera::exec
