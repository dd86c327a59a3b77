// SPDX-License-Identifier: Apache-2.0
#include "measured/retime.h"

#include <fmt/format.h>

#include <string_view>

#include "base/error.h"
#include "base/units.h"

namespace tessera::measured {

namespace {

// The tensor-core rate of a profile: bf16, else fp16 (parts without bf16), else fp32.
double matrix_peak(const hw::Profile& p) {
  for (base::DType d : {base::DType::kBF16, base::DType::kFP16, base::DType::kFP32}) {
    if (p.peak(d) > 0.0) {
      return p.peak(d);
    }
  }
  return p.vector_flops;
}

// A copy between host and device memory, by its Kineto name ("Memcpy HtoD (Pageable ->
// Device)", "Memcpy DtoH (Device -> Pinned)"); device-to-device copies are HBM-bound.
bool host_copy(std::string_view name) {
  return name.find("HtoD") != std::string_view::npos || name.find("DtoH") != std::string_view::npos;
}

double link_rate(const hw::LinkSpec& l) {
  return l.bandwidth * l.efficiency;
}

double ratio(double from, double to, const char* what, const hw::Profile& target) {
  if (!(from > 0.0) || !(to > 0.0)) {
    throw base::InputError(
        fmt::format("cannot move durations to '{}': its {} is not positive", target.name, what));
  }
  return from / to;
}

}  // namespace

RetimeFactors retime_factors(const hw::Profile& from, const hw::Profile& to, std::int32_t ranks) {
  RetimeFactors f;
  f.gemm = ratio(matrix_peak(from) * from.gemm.max_fraction, matrix_peak(to) * to.gemm.max_fraction,
                 "GEMM rate", to);
  f.attention = ratio(matrix_peak(from) * from.attention_fraction,
                      matrix_peak(to) * to.attention_fraction, "attention rate", to);
  f.memory = ratio(from.hbm_bandwidth * from.hbm_efficiency, to.hbm_bandwidth * to.hbm_efficiency,
                   "HBM bandwidth", to);
  f.comm_scale_up_from = ranks <= from.devices_per_node;
  f.comm_scale_up_to = ranks <= to.devices_per_node;
  f.comm = ratio(link_rate(f.comm_scale_up_from ? from.scale_up : from.scale_out),
                 link_rate(f.comm_scale_up_to ? to.scale_up : to.scale_out), "link bandwidth", to);
  return f;
}

RetimeFactors retime(graph::ExecGraph& g, const hw::Profile& from, const hw::Profile& to,
                     std::int32_t ranks, graph::Stream host_stream) {
  RetimeFactors f = retime_factors(from, to, ranks);
  for (graph::RankGraph& rg : g.classes) {
    for (graph::Node& n : rg.nodes) {
      if (n.fixed_duration <= 0 || n.stream == host_stream) {
        continue;
      }
      double k = 1.0;
      if (n.op == graph::OpClass::kCopy && host_copy(g.names[n.name])) {
        ++f.host_copy_nodes;  // PCIe-bound: the profiles do not describe the host link
        continue;
      }
      if (n.kind != graph::NodeKind::kCompute) {
        k = f.comm;
        ++f.comm_nodes;
      } else if (n.op == graph::OpClass::kGemm) {
        k = f.gemm;
        ++f.gemm_nodes;
      } else if (n.op == graph::OpClass::kAttention) {
        k = f.attention;
        ++f.attention_nodes;
      } else {
        k = f.memory;
        ++f.memory_nodes;
      }
      n.fixed_duration = base::from_picoseconds(static_cast<double>(n.fixed_duration) * k);
    }
  }
  return f;
}

}  // namespace tessera::measured
