// SPDX-License-Identifier: Apache-2.0
// StageBuilder's ZeRO-2 and ZeRO-3 (docs/sharded_data_parallel.md): every block is a unit, as
// FSDP wraps each transformer block, the embedding and the head. ZeRO-3 all-gathers a unit's
// weights before its forward and, unless reshard_after_forward is off, again before its
// backward; a gather waits for the unit two before it to finish, so it overlaps the one before
// (FSDP2's prefetch: two units unsharded at a time), except a backward gather under FSDP1's
// BACKWARD_POST, which waits for the unit just before. After a unit's backward its gradients are
// reduce-scattered over the shard group (HSDP: then all-reduced over the replicas), and its
// gathered weights released.
#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

// The parameters of block k in gradient domain d (dense: all but the routed experts').
double StageBuilder::unit_params(std::size_t k, const GradDomain& d) const {
  const BlockProgram& p = *blocks_[k].prog;
  return d.experts ? p.expert_params : p.params - p.expert_params;
}

// ZeRO-3 without resharding under a pipeline schedule: PyTorch's pipeline stages keep a unit's
// weights gathered and its gradients unsharded from the step's first forward to its last
// backward (set_reshard_after_backward and set_requires_gradient_sync off until then).
bool StageBuilder::keeps_units() const {
  return c_.s.zero_stage() == 3 && !c_.s.reshards_after_forward() && c_.s.parallel.pp > 1;
}

// The weights block k's FP8 GEMMs read among its domain-d parameters.
double StageBuilder::fp8_weights(std::size_t k, const GradDomain& d) const {
  const BlockProgram& p = *blocks_[k].prog;
  return d.experts ? p.fp8_expert_weight_elements
                   : p.fp8_weight_elements - p.fp8_expert_weight_elements;
}

double StageBuilder::fp8_gather_saving(std::size_t k, const GradDomain& d) const {
  if (!c_.fp8.param_gather) {
    return 0.0;
  }
  return fp8_weights(k, d) *
         (base::dtype_bytes(c_.s.training.precision) - c_.fp8.gathered_weight_bytes());
}

NodeId StageBuilder::unit_gather(std::size_t k, const GradDomain& d, double params,
                                 graph::Phase phase) {
  const Scenario& s = c_.s;
  Node n;
  n.kind = graph::NodeKind::kCollective;
  n.coll = graph::CollType::kAllGather;
  n.stream = graph::Stream::kDPGather;
  n.group = d.group;
  n.bytes = params * base::dtype_bytes(s.training.precision) - fp8_gather_saving(k, d);
  n.dtype = s.training.precision;
  n.phase = phase;
  n.name = c_.reduction_names.unit_gather;
  n.layer = blocks_[k].layer;
  if (d.group < 0) {  // a group of one holds the whole unit already
    n.kind = graph::NodeKind::kCompute;
    n.fixed_duration = 0;
  } else {
    n.mem_alloc = n.comm_alloc = static_cast<std::int64_t>(n.bytes);
    units_[k].gathered_bytes += n.mem_alloc;
  }
  // BACKWARD_POST: a backward gather waits for the unit before it in backward order, whose
  // weights are freed first; otherwise for the unit two before, overlapping the one between.
  const bool post =
      phase == graph::Phase::kBackward && s.training.backward_prefetch == BackwardPrefetch::kPost;
  const NodeId after = unit_ends_[post ? 1 : 0];
  return after == kNone ? g_.add(n) : g_.add(n, {after});
}

// Before a part of block k: the weights it reads gathered (ZeRO-3: a forward, a backward or
// its input-gradient half) and the buffer of the weight gradients it makes (a backward or its
// weight-gradient half), unless they are still there.
void StageBuilder::unit_before(std::size_t k, UnitPart part, std::int32_t mb) {
  const std::int64_t zero = c_.s.zero_stage();
  if (zero < 2) {
    return;
  }
  const bool weights = part != UnitPart::kWeightGrad;
  const bool grads_made = part == UnitPart::kBackward || part == UnitPart::kWeightGrad;
  UnitState& u = units_[k];
  std::vector<NodeId> deps;
  std::int64_t grads = 0;
  for (const GradDomain& d : grad_domains()) {
    const double p = unit_params(k, d);
    if (p <= 0.0) {
      continue;
    }
    if (zero == 3 && weights && !u.gathered) {
      deps.push_back(unit_gather(
          k, d, p, part == UnitPart::kForward ? graph::Phase::kForward : graph::Phase::kBackward));
    }
    if (grads_made && !u.grads && d.group >= 0) {
      grads += static_cast<std::int64_t>(p * c_.s.training.grad_bytes());
    }
  }
  const bool gathers = zero == 3 && weights && !u.gathered;
  u.gathered = u.gathered || (zero == 3 && weights);
  u.grads = u.grads || grads_made;
  if (!deps.empty() || grads > 0) {
    NodeId w = marker(c_.reduction_names.unit_wait, -1, deps, grads, 0);
    g_.nodes[w].comm_alloc = grads;
  }
  if (gathers && casts_gathered_weights()) {
    fp8_gathered_cast(
        k, mb, part == UnitPart::kForward ? graph::Phase::kForward : graph::Phase::kBackward);
  }
}

// The release of block k's gathered weights after `end`; returns the node that ends the unit.
NodeId StageBuilder::unit_release(std::size_t k, NodeId end) {
  UnitState& u = units_[k];
  if (!u.gathered || c_.s.zero_stage() < 3) {
    return end;
  }
  NodeId r = marker(c_.reduction_names.unit_release, -1, {end}, 0, u.gathered_bytes);
  g_.nodes[r].comm_free = u.gathered_bytes;
  u.gathered = false;
  u.gathered_bytes = 0;
  return r;
}

void StageBuilder::unit_forward_done(std::size_t k) {
  if (c_.s.zero_stage() < 2) {
    return;
  }
  NodeId end = last_node();
  if (c_.s.reshards_after_forward()) {
    end = unit_release(k, end);
  }
  unit_ends_ = {unit_ends_[1], end};
}

// After block k's backward (`wgrads`: its weight gradients are complete, not a zero-bubble
// input-gradient half): its gradients reduced and its weights released, unless both are kept
// until the step's last backward.
void StageBuilder::unit_backward_done(std::size_t k, bool wgrads) {
  if (c_.s.zero_stage() < 2) {
    return;
  }
  NodeId end = last_node();
  UnitState& u = units_[k];
  const bool last = wgrads && ++u.backwards == c_.s.microbatches();
  if (wgrads && (!keeps_units() || last)) {
    for (const GradDomain& d : grad_domains()) {
      if (const double p = unit_params(k, d); p > 0.0) {
        unit_reduce(k, d, p, end, last);
      }
    }
    u.grads = false;
  }
  // The weight-gradient half of a zero-bubble backward needs no weights: they go after the
  // input-gradient half.
  if (!keeps_units() || last) {
    end = unit_release(k, end);
  }
  unit_ends_ = {unit_ends_[1], end};
}

// Block k's gradients of domain d reduce-scattered over its shard group after `end` (the
// unit's backward: FSDP's post-backward hook), which frees their unsharded buffer; under HSDP
// the shard is then all-reduced over the replicas.
void StageBuilder::unit_reduce(std::size_t k, const GradDomain& d, double params, NodeId end,
                               bool last) {
  const TrainingConfig& t = c_.s.training;
  NodeId r =
      dp_collective(graph::CollType::kReduceScatter, d.group, params * t.grad_bytes(),
                    t.grad_dtype(), {end}, c_.reduction_names.unit_reduce, graph::Phase::kBackward);
  Node& n = g_.nodes[r];
  n.layer = blocks_[k].layer;
  if (d.group >= 0) {
    n.mem_free = n.comm_free = static_cast<std::int64_t>(params * t.grad_bytes());
  }
  if (d.replicas >= 0) {
    r = dp_collective(graph::CollType::kAllReduce, d.replicas, params / d.ranks * t.grad_bytes(),
                      t.grad_dtype(), {r}, c_.reduction_names.replica_grad,
                      graph::Phase::kBackward);
    g_.nodes[r].layer = blocks_[k].layer;
  }
  if (last) {
    unit_reductions_.push_back(r);
  }
}

}  // namespace tessera::synth::detail
