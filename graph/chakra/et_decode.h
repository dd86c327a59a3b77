// SPDX-License-Identifier: Apache-2.0
// Decoding of the bytes of one .et file: varint32-delimited protobuf messages, GlobalMetadata
// first, then Nodes; gzip-compressed files are recognised by their magic bytes.
#pragma once

#include <string>
#include <string_view>

#include "graph/chakra/et_trace.h"

namespace tessera::graph::chakra {

// Contract: returns the trace or throws base::InputError naming `path` and the frame, byte
// offset or node at fault (truncated message, length varint longer than 32 bits, malformed
// protobuf, a version other than 0.x). Never reads past `bytes`; any input terminates.
EtTrace decode_et(std::string_view bytes, const std::string& path);

// The whole file, or base::InputError when it cannot be read.
std::string load_file(const std::string& path);

}  // namespace tessera::graph::chakra
