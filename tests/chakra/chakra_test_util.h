// SPDX-License-Identifier: Apache-2.0
// Helpers for the Chakra tests: trace files assembled from
// protobuf messages (to build inputs the writer never would: cycles, dangling ids, ...).
#pragma once

#include <google/protobuf/util/delimited_message_util.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graph/chakra/et_def.pb.h"
#include "tests/temp_dir.h"

namespace tessera::chakra_test {

using tessera::testing::TempDir;

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Metadata (version 0.0.4) followed by `nodes`, delimited as in a .et file.
inline std::string et_bytes(const std::vector<ChakraProtoMsg::Node>& nodes) {
  std::ostringstream out;
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  google::protobuf::util::SerializeDelimitedToOstream(meta, &out);
  for (const auto& n : nodes) {
    google::protobuf::util::SerializeDelimitedToOstream(n, &out);
  }
  return std::move(out).str();
}

inline ChakraProtoMsg::Node et_node(std::uint64_t id, ChakraProtoMsg::NodeType type,
                                    std::vector<std::uint64_t> data_deps = {}) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(type);
  for (std::uint64_t d : data_deps) {
    n.add_data_deps(d);
  }
  return n;
}

inline ChakraProtoMsg::AttributeProto& et_attr(ChakraProtoMsg::Node& n, const std::string& name) {
  ChakraProtoMsg::AttributeProto* a = n.add_attr();
  a->set_name(name);
  return *a;
}

}  // namespace tessera::chakra_test
