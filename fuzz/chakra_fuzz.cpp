// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Chakra execution-trace reader on arbitrary bytes (one .et file,
// gzip accepted), then its conversion into an execution graph, the same trace standing for
// every rank of a 1-4 rank job (the last input byte picks the job size and the timing
// option). A base::InputError is the expected answer to bad bytes; a crash, a sanitizer
// report, a leak or any other exception is a finding.
#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/base/error.h"
#include "synth/graph/chakra/chakra_reader.h"
#include "synth/graph/chakra/et_decode.h"

// protobuf logs every malformed string field to stderr: quiet, the fuzzer's output stays
// readable (decode_et reports the failure itself).
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  static const google::protobuf::LogSilencer kQuiet;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera::graph::chakra;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  unsigned knobs = size > 0 ? data[size - 1] : 0;
  try {
    EtTrace t = decode_et(bytes, "fuzz.0.et");
    ImportOptions options;
    options.num_ranks = static_cast<std::int32_t>(1 + knobs % 4);
    options.use_durations = (knobs & 0x10U) != 0;
    (void)import_chakra(
        [&](std::int32_t rank) {
          EtTrace copy = t;
          copy.path = et_path("fuzz", rank);
          return copy;
        },
        options);
  } catch (const tessera::base::InputError&) {
    // Bad bytes: the expected answer.
  }
  return 0;
}
