// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Chakra execution-trace reader on arbitrary bytes (one .et file,
// gzip accepted), then its conversion into an execution graph, the same trace standing for
// every rank of a 1-4 rank job (the last input byte picks the job size, the timing option
// and the send semantics), then, for a graph of at most a few thousand nodes, its
// simulation on an H100 node, as `tessera simulate --chakra` does. base::InputError is the
// expected answer to bad bytes, and base::SimulationError to a trace whose ranks do not fit
// together (a deadlock, a duration past the simulator's horizon). A crash, a sanitizer
// report, a leak, base::InternalError or any other exception is a finding.
#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "experiments/pipeline.h"
#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/et_decode.h"

// protobuf logs every malformed string field to stderr: quiet, the fuzzer's output stays
// readable (decode_et reports the failure itself).
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  static const google::protobuf::LogSilencer kQuiet;
  return 0;
}

namespace {

void simulate(tessera::graph::ExecGraph g, bool eager_sends) {
  using namespace tessera;
  static const hw::Profile kProfile = hw::load_profile("h100-sxm");
  static const topology::TopologySpec kSpec = topology::load_topology_preset("single-node", {});
  sim::SimOptions opt;
  opt.share_rank_classes = false;
  opt.eager_sends = eager_sends;
  (void)experiments::simulate_graph(std::move(g), kProfile, kSpec, opt, {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera::graph::chakra;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  unsigned knobs = size > 0 ? data[size - 1] : 0;
  try {
    EtTrace t = decode_et(bytes, "fuzz.0.et");
    ImportOptions options;
    options.num_ranks = static_cast<std::int32_t>(1 + knobs % 4);
    options.use_durations = (knobs & 0x10U) != 0;
    tessera::graph::ExecGraph g = import_chakra(
        [&](std::int32_t rank) {
          EtTrace copy = t;
          copy.path = et_path("fuzz", rank);
          return copy;
        },
        options);
    std::size_t nodes = 0;
    for (const auto& c : g.classes) {
      nodes += c.size();
    }
    if (nodes <= 4096) {
      simulate(std::move(g), (knobs & 0x20U) != 0);
    }
  } catch (const tessera::base::InputError&) {
    // Bad bytes: the expected answer.
  } catch (const tessera::base::SimulationError&) {
    // Ranks that do not fit together: the expected answer.
  }
  return 0;
}
