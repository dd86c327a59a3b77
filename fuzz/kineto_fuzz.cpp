// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Kineto (PyTorch profiler) trace reader on arbitrary bytes, plain or
// gzip-compressed, then the iterations and the replay graph of what it read. A
// base::InputError is the expected answer to bad bytes; a crash, a sanitizer report, a leak
// or any other exception is a finding. Plain inputs are also parsed by the streaming JSON
// parser through a tiny buffer and by nlohmann::json: the two must accept the same texts and
// report the same events (abort otherwise).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.h"
#include "measured/iterations.h"
#include "measured/kineto_reader.h"
#include "measured/replay_graph.h"
#include "tests/kineto/json_log.h"

namespace {

using namespace tessera;

void read_and_replay(std::string_view bytes) {
  try {
    measured::KinetoTrace t = measured::read_kineto_bytes(bytes, "fuzz.json");
    measured::IterationSet set = measured::find_iterations(t);
    for (std::size_t i = 0; i < set.iterations.size() && i < 3; ++i) {
      try {
        (void)measured::build_replay(t, set, i);
      } catch (const base::InputError&) {
        // An iteration without GPU activity.
      }
    }
  } catch (const base::InputError&) {
    // Bad bytes: the expected answer.
  }
}

void compare_with_nlohmann(std::string_view text) {
  // The buffer size comes from the input too, so that refills land everywhere.
  std::size_t capacity = 1 + (text.empty() ? 0 : static_cast<unsigned char>(text.back()) % 32);
  std::string error;
  std::string ours = kineto_test::stream_log(text, capacity, &error);
  std::string theirs = kineto_test::nlohmann_log(text);
  if (ours != theirs) {
    std::fprintf(stderr,
                 "JsonStream (buffer of %zu bytes) and nlohmann::json disagree\n"
                 "  JsonStream: %s%s\n  nlohmann:   %s\n",
                 capacity, ours.c_str(), error.empty() ? "" : (" " + error).c_str(),
                 theirs.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  read_and_replay(bytes);
  bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!gzip) {
    compare_with_nlohmann(bytes);
  }
  return 0;
}
