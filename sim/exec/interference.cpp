// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/interference.h"

#include <algorithm>
#include <cmath>

namespace tessera::exec {

namespace {

constexpr double kMaxHbmShare = 0.9;  // compute always keeps a little bandwidth

bool one_node(const graph::Group& g, int per_node) {
  if (g.ranks.empty() || per_node <= 0) {
    return true;
  }
  const int node = g.ranks.front() / per_node;
  return std::all_of(g.ranks.begin(), g.ranks.end(),
                     [&](std::int32_t r) { return r / per_node == node; });
}

}  // namespace

int collective_sms(const graph::Node& coll, const hw::Profile& p, int chosen) {
  if (coll.comm_sms > 0) {
    return coll.comm_sms;
  }
  return chosen > 0 ? chosen : p.collective.channels;
}

CollectiveLoad collective_load(const graph::Node& coll, const graph::Group& group,
                               const hw::Profile& p, int chosen_sms, int per_node) {
  const int node = per_node > 0 ? per_node : p.devices_per_node;
  const hw::LinkSpec& link = one_node(group, node) ? p.scale_up : p.scale_out;
  const bool reduces =
      coll.coll == graph::CollType::kAllReduce || coll.coll == graph::CollType::kReduceScatter;
  const double bytes_per_sent = reduces ? 3.0 : 2.0;
  const double hbm = p.hbm_bandwidth * p.hbm_efficiency;
  const double share = hbm > 0.0 ? bytes_per_sent * link.bandwidth * link.efficiency / hbm : 0.0;
  return {collective_sms(coll, p, chosen_sms), std::min(share, kMaxHbmShare)};
}

double interfered_rate(const graph::Node& kernel, const hw::Profile& p,
                       const CollectiveLoad& load) {
  if (kernel.fixed_duration >= 0 || (kernel.flops <= 0.0 && kernel.bytes <= 0.0)) {
    return 1.0;
  }
  double peak = kernel.op == graph::OpClass::kGemm || kernel.op == graph::OpClass::kAttention
                    ? p.peak(kernel.dtype)
                    : p.vector_flops;
  if (peak <= 0.0) {
    peak = p.vector_flops;
  }
  const double t_flops = peak > 0.0 ? kernel.flops / peak : 0.0;
  const double hbm = p.hbm_bandwidth * p.hbm_efficiency;
  const double t_bytes = hbm > 0.0 ? kernel.bytes / hbm : 0.0;
  if (t_flops >= t_bytes) {
    const auto units = static_cast<double>(std::max(p.gemm.compute_units, 1));
    return (units - static_cast<double>(load.sms)) / units;
  }
  return 1.0 - load.hbm_share;
}

void InterferenceState::add(const CollectiveLoad& l) {
  ++in_flight_;
  sms_ += l.sms;
  hbm_ += l.hbm_share;
}

void InterferenceState::remove(const CollectiveLoad& l) {
  --in_flight_;
  sms_ -= l.sms;
  hbm_ -= l.hbm_share;
  if (in_flight_ == 0) {  // no drift from floating-point sums
    sms_ = 0;
    hbm_ = 0.0;
  }
}

CollectiveLoad InterferenceState::total(const hw::Profile& p) const {
  const int max_sms = std::max(p.gemm.compute_units / 2, 0);
  return {std::min(sms_, max_sms), std::clamp(hbm_, 0.0, kMaxHbmShare)};
}

base::SimTime RunningKernels::to_time(double ps) {
  return static_cast<base::SimTime>(std::llround(ps));
}

base::SimTime RunningKernels::start(graph::NodeId n, base::SimTime d, double rate,
                                    base::SimTime now) {
  Kernel k{n, static_cast<double>(d), rate, now, 0, now};
  k.end = rate == 1.0 ? now + d : now + to_time(k.remaining / rate);
  kernels_.push_back(k);
  return k.end;
}

bool RunningKernels::finish(graph::NodeId n, base::SimTime now, base::SimTime& started) {
  auto it =
      std::find_if(kernels_.begin(), kernels_.end(), [&](const Kernel& k) { return k.node == n; });
  if (it == kernels_.end() || it->end != now) {
    return false;
  }
  started = it->start;
  kernels_.erase(it);
  return true;
}

}  // namespace tessera::exec
