// SPDX-License-Identifier: Apache-2.0
#include "synth/parallel/tp_overlap.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tessera::synth::parallel {

namespace {

constexpr std::int32_t kNo = -3;  // not a dependency index (kFwdInput, kBwdInput are -1, -2)

bool is_tp_coll(const ProgOp& o, graph::CollType t) {
  return o.node.kind == graph::NodeKind::kCollective && o.node.coll == t &&
         o.axis == static_cast<std::uint8_t>(Axis::kTP);
}

// A linear layer's GEMM. TE's userbuffers overlap linear layers, not the experts' grouped
// GEMMs (batched over the experts) or the unfused attention's batched GEMMs.
bool is_gemm(const ProgOp& o) {
  return o.node.kind == graph::NodeKind::kCompute && o.node.op == graph::OpClass::kGemm &&
         o.node.gemm.batch <= 1;
}

// A share `f` of an op: its costs and the GEMM's rows scaled (a chunk of the sequence).
ProgOp part(const ProgOp& o, double f, const char* suffix) {
  ProgOp q = o;
  q.name += suffix;
  q.node.flops *= f;
  q.node.bytes *= f;
  q.model_flops *= f;
  q.node.mem_alloc = q.node.comm_alloc = q.node.mem_free = q.node.comm_free = 0;
  if (q.node.gemm.m > 0) {
    q.node.gemm.m = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::llround(static_cast<double>(o.node.gemm.m) * f)));
  }
  return q;
}

// What to rewrite: per op, the all-gather it pipelines with (a GEMM) and the reduce-scatter
// it feeds (a GEMM), or kNo.
struct Plan {
  std::vector<std::int32_t> gather_of;   // GEMM -> all-gather
  std::vector<std::int32_t> scatter_of;  // GEMM -> reduce-scatter
  std::vector<std::int32_t> gemm_of;     // reduce-scatter -> GEMM
};

bool backward_input(const BlockProgram& p, const ProgOp& o) {
  return std::all_of(o.deps.begin(), o.deps.end(),
                     [&](std::int32_t d) { return d == kBwdInput || d >= p.n_fwd; });
}

Plan plan(const BlockProgram& p) {
  const auto n = static_cast<std::int32_t>(p.ops.size());
  Plan pl{std::vector<std::int32_t>(p.ops.size(), kNo),
          std::vector<std::int32_t>(p.ops.size(), kNo),
          std::vector<std::int32_t>(p.ops.size(), kNo)};
  std::vector<char> gather_used(p.ops.size(), 0);
  for (std::int32_t i = 0; i < n; ++i) {
    const ProgOp& o = p.ops[static_cast<std::size_t>(i)];
    const bool bwd = o.node.phase == graph::Phase::kBackward;
    // In backward the ring exchange is the input-gradient GEMM's (proj_dgrad, fc2_dgrad); a
    // weight-gradient GEMM's gathers run beside the GEMM before it (bulk).
    const bool wgrad =
        bwd && std::find(p.wgrad_ops.begin(), p.wgrad_ops.end(), i) != p.wgrad_ops.end();
    if (is_gemm(o) && !wgrad) {
      for (std::int32_t d : o.deps) {
        if (d < 0 || gather_used[static_cast<std::size_t>(d)] != 0) {
          continue;
        }
        const ProgOp& a = p.ops[static_cast<std::size_t>(d)];
        if (is_tp_coll(a, graph::CollType::kAllGather) && (!bwd || backward_input(p, a))) {
          pl.gather_of[static_cast<std::size_t>(i)] = d;
          gather_used[static_cast<std::size_t>(d)] = 1;
          break;
        }
      }
    }
    if (!bwd && is_tp_coll(o, graph::CollType::kReduceScatter) && o.deps.size() == 1 &&
        o.deps[0] >= 0 && is_gemm(p.ops[static_cast<std::size_t>(o.deps[0])]) &&
        pl.gather_of[static_cast<std::size_t>(o.deps[0])] == kNo &&
        pl.scatter_of[static_cast<std::size_t>(o.deps[0])] == kNo) {
      pl.scatter_of[static_cast<std::size_t>(o.deps[0])] = i;
      pl.gemm_of[static_cast<std::size_t>(i)] = o.deps[0];
    }
  }
  return pl;
}

class Rewrite {
 public:
  Rewrite(BlockProgram& p, const Plan& pl, const TpOverlapConfig& cfg)
      : p_(p), pl_(pl), cfg_(cfg), last_(p.ops.size(), kNo), first_(p.ops.size(), kNo) {}

  std::int32_t run() {
    std::int32_t rewritten = 0;
    std::int32_t n_fwd = 0;
    std::int32_t w_begin = 0;
    for (std::size_t i = 0; i < p_.ops.size(); ++i) {
      if (static_cast<std::int32_t>(i) == p_.n_fwd) {
        n_fwd = size();
      }
      if (static_cast<std::int32_t>(i) == p_.w_begin) {
        w_begin = size();
      }
      rewritten += emit(i) ? 1 : 0;
    }
    if (p_.w_begin == static_cast<std::int32_t>(p_.ops.size())) {
      w_begin = size();
    }
    p_.n_fwd = n_fwd;
    p_.w_begin = w_begin;
    p_.fwd_out = remap(p_.fwd_out);
    p_.bwd_out = remap(p_.bwd_out);
    for (std::int32_t& w : p_.wgrad_ops) {
      w = remap(w);
    }
    p_.ops = std::move(out_);
    return rewritten;
  }

 private:
  [[nodiscard]] std::int32_t size() const { return static_cast<std::int32_t>(out_.size()); }
  [[nodiscard]] std::int32_t remap(std::int32_t d) const {
    return d < 0 ? d : last_[static_cast<std::size_t>(d)];
  }
  std::vector<std::int32_t> mapped(const std::vector<std::int32_t>& deps) const {
    std::vector<std::int32_t> m;
    for (std::int32_t d : deps) {
      m.push_back(remap(d));
    }
    return m;
  }
  std::int32_t push(ProgOp o) {
    out_.push_back(std::move(o));
    return size() - 1;
  }
  // The first part takes the op's allocations, the last its frees.
  void split(std::size_t i, double f_first, std::vector<std::int32_t> first_deps,
             const std::vector<std::int32_t>& last_deps) {
    const ProgOp& o = p_.ops[i];
    ProgOp a = part(o, f_first, ".part1");
    a.node.mem_alloc = o.node.mem_alloc;
    a.node.comm_alloc = o.node.comm_alloc;
    a.deps = std::move(first_deps);
    first_[i] = push(std::move(a));
    ProgOp b = part(o, 1.0 - f_first, ".part2");
    b.node.mem_free = o.node.mem_free;
    b.node.comm_free = o.node.comm_free;
    b.deps.assign(1, first_[i]);
    for (std::int32_t d : last_deps) {
      b.deps.push_back(d);
    }
    last_[i] = push(std::move(b));
  }

  bool emit(std::size_t i) {
    const ProgOp& o = p_.ops[i];
    if (std::int32_t ag = pl_.gather_of[i]; ag != kNo) {  // ring exchange
      const auto n = static_cast<double>(std::max<std::int64_t>(cfg_.ag_chunks, 2));
      // The local chunk waits for what the gather's input waits for, not for the gather.
      std::vector<std::int32_t> local;
      auto add = [&](std::int32_t d) {
        if (std::find(local.begin(), local.end(), d) == local.end()) {
          local.push_back(d);
        }
      };
      for (std::int32_t d : o.deps) {
        if (d != ag) {
          add(remap(d));
          continue;
        }
        for (std::int32_t a : p_.ops[static_cast<std::size_t>(ag)].deps) {
          add(remap(a));
        }
      }
      split(i, (n - 1.0) / n, std::move(local), {remap(ag)});
      out_[static_cast<std::size_t>(remap(ag))].node.comm_sms = cfg_.ag_sms;
      return true;
    }
    if (pl_.scatter_of[i] != kNo) {  // pipeline: the first chunk, then the rest
      const auto n = static_cast<double>(std::max<std::int64_t>(cfg_.rs_chunks, 2));
      split(i, 1.0 / n, mapped(o.deps), {});
      return true;
    }
    if (std::int32_t g = pl_.gemm_of[i]; g != kNo) {
      const auto n = static_cast<double>(std::max<std::int64_t>(cfg_.rs_chunks, 2));
      split(i, (n - 1.0) / n, {first_[static_cast<std::size_t>(g)]}, {remap(g)});
      out_[static_cast<std::size_t>(first_[i])].node.comm_sms = cfg_.rs_sms;
      out_[static_cast<std::size_t>(last_[i])].node.comm_sms = cfg_.rs_sms;
      return false;
    }
    ProgOp c = o;
    c.deps = mapped(o.deps);
    last_[i] = first_[i] = push(std::move(c));
    return false;
  }

  BlockProgram& p_;
  const Plan& pl_;
  const TpOverlapConfig& cfg_;
  std::vector<std::int32_t> last_;   // old index -> the new op its consumers wait for
  std::vector<std::int32_t> first_;  // old index -> its first new op
  std::vector<ProgOp> out_;
};

}  // namespace

std::int32_t overlap_tp_comm(BlockProgram& p, const TpOverlapConfig& cfg) {
  Plan pl = plan(p);
  return Rewrite(p, pl, cfg).run();
}

std::int32_t serialize_backward_tp_comm(BlockProgram& p) {
  std::int32_t changed = 0;
  std::int32_t last_compute = kNo;
  for (auto i = static_cast<std::size_t>(p.n_fwd); i < p.ops.size(); ++i) {
    ProgOp& o = p.ops[i];
    if (o.node.kind == graph::NodeKind::kCompute) {
      last_compute = static_cast<std::int32_t>(i);
    } else if (o.node.kind == graph::NodeKind::kCollective &&
               o.node.phase == graph::Phase::kBackward &&
               o.axis == static_cast<std::uint8_t>(Axis::kTP) && last_compute != kNo &&
               std::find(o.deps.begin(), o.deps.end(), last_compute) == o.deps.end()) {
      o.deps.push_back(last_compute);
      ++changed;
    }
  }
  return changed;
}

}  // namespace tessera::synth::parallel
