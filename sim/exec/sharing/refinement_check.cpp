// SPDX-License-Identifier: Apache-2.0
// check_refinement (class_refinement.h): the symmetry rule plus the correspondences a shared
// run relies on, each re-checked on the final subclasses.
#include <fmt/format.h>

#include <cstddef>

#include "sim/exec/sharing/class_refinement.h"

namespace tessera::exec {

namespace {

std::int32_t at(const std::vector<std::int32_t>& v, std::int32_t i) {
  return v[static_cast<std::size_t>(i)];
}

// Rank r relabels its class graph's groups and peers onto the same group classes, peer
// subclasses and peer routes as its subclass representative s.
bool same_refs(const Refinement& ref, RouteSignatures& sigs, std::int32_t r, std::int32_t s) {
  const ClassRefs& a = ref.mapped[static_cast<std::size_t>(r)];
  const ClassRefs& b = ref.mapped[static_cast<std::size_t>(s)];
  for (std::size_t i = 0; i < a.groups.size(); ++i) {
    if (at(ref.groups.class_of_group, a.groups[i]) != at(ref.groups.class_of_group, b.groups[i])) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.peers.size(); ++i) {
    const std::int32_t p = a.peers[i];
    const std::int32_t q = b.peers[i];
    if (at(ref.parts.class_of_rank, p) != at(ref.parts.class_of_rank, q) ||
        sigs.route(r, p) != sigs.route(s, q) || sigs.route(p, r) != sigs.route(q, s)) {
      return false;
    }
  }
  return true;
}

std::string check_refs(const Refinement& ref, RouteSignatures& sigs) {
  for (std::size_t r = 0; r < ref.parts.class_of_rank.size(); ++r) {
    const std::int32_t s = at(ref.parts.rep, ref.parts.class_of_rank[r]);
    if (!same_refs(ref, sigs, static_cast<std::int32_t>(r), s)) {
      return fmt::format(
          "rank {} meets other group classes or peers than its subclass representative, rank {}", r,
          s);
    }
  }
  return "";
}

// A class graph counts its collectives' sequence numbers per group class of the class
// representative's groups; every subclass representative must pair its groups the same way.
std::string check_sequences(const graph::ExecGraph& graph, const Refinement& ref,
                            const std::vector<ClassRefs>& refs) {
  const std::vector<std::int32_t>& cls = ref.groups.class_of_group;
  for (std::int32_t s : ref.parts.rep) {
    const auto c = static_cast<std::size_t>(at(graph.class_of_rank, s));
    const std::vector<std::int32_t>& own = refs[c].groups;
    const std::vector<std::int32_t>& mine = ref.mapped[static_cast<std::size_t>(s)].groups;
    for (std::size_t i = 0; i < own.size(); ++i) {
      for (std::size_t j = i + 1; j < own.size(); ++j) {
        if ((at(cls, own[i]) == at(cls, own[j])) != (at(cls, mine[i]) == at(cls, mine[j]))) {
          return fmt::format(
              "rank {} would count the collectives of groups {} and {} differently than its "
              "class representative, rank {}",
              s, mine[i], mine[j], graph.class_rep[c]);
        }
      }
    }
  }
  return "";
}

// A shared collective loads the links with every copy's flows at the pace of one copy, so
// the copies' rings must cross the same routes.
std::string check_copies(const Refinement& ref, const RouteSignatures& sigs) {
  for (const std::vector<std::int32_t>& copies : ref.groups.groups) {
    for (std::int32_t g : copies) {
      if (sigs.ring(g) != sigs.ring(copies.front())) {
        return fmt::format("groups {} and {} stand for each other but their rings differ",
                           copies.front(), g);
      }
    }
  }
  return "";
}

}  // namespace

std::string check_refinement(const graph::ExecGraph& graph, RouteSignatures& sigs,
                             const Refinement& ref, const std::vector<ClassRefs>& refs) {
  std::string why = find_asymmetry(sigs, ref.parts, ref.groups);
  if (why.empty()) {
    why = check_refs(ref, sigs);
  }
  if (why.empty()) {
    why = check_sequences(graph, ref, refs);
  }
  if (why.empty()) {
    why = check_copies(ref, sigs);
  }
  return why;
}

}  // namespace tessera::exec
