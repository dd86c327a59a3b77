// SPDX-License-Identifier: Apache-2.0
// Reading a PyTorch profiler (Kineto) trace: Chrome-trace JSON, plain or gzip-compressed,
// streamed through a strict JSON parser that hands out one token at a time (json_stream.h:
// no document tree, no per-token allocation; memory grows with the events kept, not with
// the file).
#pragma once

#include <string>
#include <string_view>

#include "measured/kineto_trace.h"

namespace tessera::measured {

// Throws base::InputError naming the file when it cannot be read, is corrupt gzip, is not
// JSON, has no traceEvents (not a trace), or has no GPU activity.
KinetoTrace read_kineto(const std::string& path);

// The same for a trace in memory (plain or gzip-compressed bytes), named `name` in errors.
KinetoTrace read_kineto_bytes(std::string_view bytes, const std::string& name);

}  // namespace tessera::measured
