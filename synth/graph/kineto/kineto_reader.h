// SPDX-License-Identifier: Apache-2.0
// Reading a PyTorch profiler (Kineto) trace: Chrome-trace JSON, plain or gzip-compressed,
// streamed through nlohmann::json's SAX parser (no document tree: memory grows with the
// events kept, not with the file).
#pragma once

#include <string>

#include "synth/graph/kineto/kineto_trace.h"

namespace tessera::graph::kineto {

// Throws base::InputError naming the file when it cannot be read, is corrupt gzip, is not
// JSON, has no traceEvents (not a trace), or has no GPU activity.
KinetoTrace read_kineto(const std::string& path);

}  // namespace tessera::graph::kineto
