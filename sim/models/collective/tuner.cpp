// SPDX-License-Identifier: Apache-2.0
#include "sim/models/collective/tuner.h"

#include <array>
#include <limits>
#include <string_view>
#include <utility>

#include "base/error.h"

namespace tessera::models {

namespace {

constexpr std::array<Protocol, kNumProtocols> kProtocols = {Protocol::kLL, Protocol::kLL128,
                                                            Protocol::kSimple};

// The rail-aligned algorithms and the plain ones they replace for the groups they realign
// (rail_hops.h); the plain ones stay for the other groups.
constexpr std::array<std::array<std::string_view, 2>, 2> kRailVariants = {
    {{"rail_ring", "ring"}, {"rail_pairwise", "pairwise"}}};

bool keep(const CollectiveAlgorithm& a, const std::vector<std::int32_t>& ranks,
          const topology::Cluster& cluster, const hw::Profile& profile,
          const TunerOptions& options) {
  const CollectiveRegistry& r = builtin_collectives();
  for (const auto& [rail, plain] : kRailVariants) {
    if (a.name() == rail) {
      return options.rail_alignment && a.applies(ranks, cluster, profile);
    }
    if (a.name() == plain && options.rail_alignment) {
      return !r.at(r.index_of(rail)).applies(ranks, cluster, profile);
    }
  }
  return a.applies(ranks, cluster, profile);
}

// The rail-aligned variant of plain algorithm `a` when it applies to the group, else `a`.
std::size_t rail_aligned(std::size_t a, const std::vector<std::int32_t>& ranks,
                         const topology::Cluster& cluster, const hw::Profile& profile) {
  const CollectiveRegistry& r = builtin_collectives();
  for (const auto& [rail, plain] : kRailVariants) {
    if (r.at(a).name() == plain && r.at(r.index_of(rail)).applies(ranks, cluster, profile)) {
      return r.index_of(rail);
    }
  }
  return a;
}

// The local steps' time: their HBM traffic at the profile's streaming rate.
base::SimTime local_step_time(double traffic, const hw::Profile& profile) {
  const double rate = profile.hbm_bandwidth * profile.hbm_efficiency;
  return rate > 0.0 && traffic > 0.0 ? base::from_seconds(traffic / rate) : 0;
}

Choice evaluate(const CollectiveAlgorithm& a, const Candidate& cand, Protocol p, graph::CollType c,
                int n, double bytes, const hw::Profile& profile, const TunerOptions& options) {
  const CollectiveCost cost = a.cost(c, n, cand.channels, bytes);
  Choice ch;
  ch.algorithm = cand.algorithm;
  ch.protocol = p;
  ch.sms = a.sms(profile);
  ch.latency = a.latency(profile, p, cost.steps, cand.hop_latency);
  if (options.ring_local_step) {
    ch.latency += local_step_time(cost.local_traffic, profile);
  }
  ch.bytes_per_flow = cost.bytes_per_flow / a.bandwidth_fraction(profile, p);
  return ch;
}

// A staged algorithm: its stages' costs one after another, the call's launch counted once.
Choice evaluate_stages(const CollectiveAlgorithm& a, const Candidate& cand, Protocol p,
                       double bytes, const hw::Profile& profile, const TunerOptions& options) {
  Choice ch;
  ch.algorithm = cand.algorithm;
  ch.protocol = p;
  ch.sms = a.sms(profile);
  for (std::size_t i = 0; i < cand.stages.size(); ++i) {
    const StageCandidate& s = cand.stages[i];
    const CollectiveAlgorithm& sub = builtin_collectives().at(s.algorithm);
    Candidate one{s.algorithm, s.rate, s.hop_latency, s.channels, {}};
    const Choice part =
        evaluate(sub, one, p, s.type, s.members, bytes * s.bytes_fraction, profile, options);
    ch.latency += part.latency - (i > 0 ? protocol_spec(profile, p).launch : 0);
    if (i == 0) {
      ch.bytes_per_flow = part.bytes_per_flow;
    } else {
      ch.later_bytes.push_back(part.bytes_per_flow);
    }
  }
  return ch;
}

double wire_time(double bytes, double rate) {
  return rate > 0.0 ? bytes / rate : 0.0;
}

double estimate(const Choice& ch, const Candidate& cand) {
  double wire = wire_time(ch.bytes_per_flow, cand.rate);
  for (std::size_t i = 0; i < ch.later_bytes.size(); ++i) {
    wire += wire_time(ch.later_bytes[i], cand.stages[i + 1].rate);
  }
  return static_cast<double>(ch.latency) + wire;
}

}  // namespace

TunerOptions tuner_options(const Effects& effects) {
  return {.collective_tuner = effects.on("collective-tuner"),
          .rail_alignment = effects.on("rail-alignment"),
          .ring_local_step = effects.on("ring-local-step")};
}

std::vector<std::size_t> tuner_candidates(graph::CollType c, const std::vector<std::int32_t>& ranks,
                                          const topology::Cluster& cluster,
                                          const hw::Profile& profile, const TunerOptions& options) {
  const CollectiveRegistry& r = builtin_collectives();
  if (!options.collective_tuner) {
    return {options.rail_alignment ? rail_aligned(r.select(c), ranks, cluster, profile)
                                   : r.select(c)};
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r.at(i).runs(c) && keep(r.at(i), ranks, cluster, profile, options)) {
      out.push_back(i);
    }
  }
  if (out.empty()) {
    throw base::InternalError("no collective algorithm applies to this group");
  }
  return out;
}

Choice tuner_choose(graph::CollType c, int n, double bytes,
                    const std::vector<Candidate>& candidates, const hw::Profile& profile,
                    const TunerOptions& options) {
  const CollectiveRegistry& r = builtin_collectives();
  Choice best;
  double best_time = std::numeric_limits<double>::infinity();
  for (const Candidate& cand : candidates) {
    const CollectiveAlgorithm& a = r.at(cand.algorithm);
    for (Protocol p : kProtocols) {
      const bool allowed = options.collective_tuner ? a.uses(p) && protocol_spec(profile, p).enabled
                                                    : p == Protocol::kSimple;
      if (!allowed) {
        continue;
      }
      Choice ch = cand.stages.empty() ? evaluate(a, cand, p, c, n, bytes, profile, options)
                                      : evaluate_stages(a, cand, p, bytes, profile, options);
      const double t = estimate(ch, cand);
      if (t < best_time) {
        best_time = t;
        best = std::move(ch);
      }
    }
  }
  if (candidates.empty()) {
    throw base::InternalError("the collective tuner was given no candidate");
  }
  return best;
}

}  // namespace tessera::models
