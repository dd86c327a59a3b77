// SPDX-License-Identifier: Apache-2.0
// Skewed mixture-of-experts routing (docs/moe.md): how far each rank's expert work and its
// all-to-all traffic are from balanced routing, per MoE layer and microbatch. The rank
// classes' graphs carry balanced costs; a node marked kExpert (the experts' GEMMs, their
// activations and expert-tensor collectives) scales by the rank's expert factor, a kExchange
// node (the dispatch and combine all-to-alls) by its exchange factor.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::graph {

enum class LoadScale : unsigned char { kNone, kExpert, kExchange };

struct ExpertLoads {
  std::int32_t ranks = 0;
  std::int32_t layers = 0;        // decoder layers (a node's `layer`)
  std::int32_t microbatches = 0;  // per replica (a node's `microbatch`)
  // [rank][layer][microbatch]: the rank's expert rows over the balanced ones, and the larger
  // of the rows it sends and receives in an all-to-all over the balanced rows it sends.
  std::vector<float> expert;
  std::vector<float> exchange;
  // Per rank: over the layers it holds and the step's microbatches, the mean and the largest
  // expert factor, and the routed token copies it dropped at the capacity factor.
  std::vector<double> mean_load;
  std::vector<double> max_load;
  std::vector<double> dropped;

  [[nodiscard]] bool empty() const { return expert.empty(); }
  // 1 for kNone, an empty table, or a node outside it (layer or microbatch -1).
  [[nodiscard]] double factor(LoadScale kind, std::int32_t rank, std::int32_t layer,
                              std::int32_t microbatch) const {
    if (kind == LoadScale::kNone || empty() || layer < 0 || layer >= layers || microbatch < 0 ||
        microbatch >= microbatches) {
      return 1.0;
    }
    const auto i = (static_cast<std::size_t>(rank) * static_cast<std::size_t>(layers) +
                    static_cast<std::size_t>(layer)) *
                       static_cast<std::size_t>(microbatches) +
                   static_cast<std::size_t>(microbatch);
    return static_cast<double>(kind == LoadScale::kExpert ? expert[i] : exchange[i]);
  }
};

}  // namespace tessera::graph
