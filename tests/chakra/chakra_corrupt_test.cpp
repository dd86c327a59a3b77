// SPDX-License-Identifier: Apache-2.0
// Broken traces fail with base::InputError naming the file (and the node where there is
// one); arbitrary bytes never crash or hang the reader. Also: every integer variant reads.
#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/et_convert.h"
#include "graph/chakra/et_decode.h"
#include "tests/chakra/chakra_test_util.h"
#include "tests/chakra/raw_decoder.h"

namespace tessera::graph::chakra {
namespace {

namespace pb = ChakraProtoMsg;
using chakra_test::et_attr;
using chakra_test::et_bytes;
using chakra_test::et_node;
using chakra_test::TempDir;
using chakra_test::write_bytes;

// Reads `bytes` as <dir>/bad.0.et, the first of `ranks` traces; returns the error text (""
// if none).
std::string read_error(const TempDir& dir, const std::string& bytes, std::int32_t ranks = 1) {
  const std::string prefix = dir.path() + "/bad";
  write_bytes(et_path(prefix, 0), bytes);
  try {
    ImportOptions o;
    o.num_ranks = ranks;
    read_chakra(prefix, o);
  } catch (const base::InputError& e) {
    return e.what();
  }
  return "";
}

// The same through the in-memory path (decode + convert, no files): for the fuzz loops.
std::string decode_error(const std::string& bytes, std::int32_t ranks = 1) {
  try {
    ImportOptions o;
    o.num_ranks = ranks;
    GroupTable groups(std::nullopt, "groups.json", ranks);
    ExecGraph g;
    convert_rank(decode_et(bytes, "fuzz.0.et"), 0, groups, g, o);
  } catch (const base::InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& bytes, std::initializer_list<const char*> parts) {
  TempDir dir;
  const std::string what = read_error(dir, bytes);
  EXPECT_NE(what.find(et_path(dir.path() + "/bad", 0)), std::string::npos) << what;
  for (const char* p : parts) {
    EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

pb::Node collective(std::uint64_t id, std::int64_t comm_type) {
  pb::Node n = et_node(id, pb::COMM_COLL_NODE);
  et_attr(n, "comm_type").set_int64_val(comm_type);
  et_attr(n, "comm_size").set_int64_val(1024);
  return n;
}

TEST(Corrupt, TruncatedFile) {
  std::string bytes = et_bytes({collective(0, pb::ALL_REDUCE), collective(1, pb::ALL_REDUCE)});
  expect_error(bytes.substr(0, bytes.size() - 3), {"truncated message", "after node 0"});
}

TEST(Corrupt, VarintOverflowInLengthPrefix) {
  expect_error(std::string("\xff\xff\xff\xff\xff\x0f", 6), {"varint overflow"});
  expect_error(std::string(12, '\xff'), {"varint overflow"});
  std::string bytes = et_bytes({collective(0, pb::ALL_REDUCE)});
  expect_error(bytes + std::string("\x80\x80\x80\x80\x80\x01", 6), {"varint overflow"});
}

TEST(Corrupt, MalformedNodeMessage) {
  std::string bytes = et_bytes({collective(0, pb::ALL_REDUCE)});
  expect_error(bytes + std::string("\x03\xff\xff\xff", 4), {"malformed Node", "after node 0"});
}

TEST(Corrupt, DanglingDependency) {
  expect_error(et_bytes({et_node(1, pb::COMP_NODE), et_node(2, pb::COMP_NODE, {1, 42})}),
               {"node 2 ('n2') depends on node 42"});
}

TEST(Corrupt, Cycle) {
  expect_error(et_bytes({et_node(1, pb::COMP_NODE, {3}), et_node(2, pb::COMP_NODE, {1}),
                         et_node(3, pb::COMP_NODE, {2}), et_node(4, pb::COMP_NODE)}),
               {"dependency cycle", "node 1 ('n1')", "node 3 ('n3')"});
  expect_error(et_bytes({et_node(7, pb::COMP_NODE, {7})}), {"dependency cycle", "node 7"});
}

TEST(Corrupt, DuplicateNodeId) {
  expect_error(et_bytes({et_node(1, pb::COMP_NODE), et_node(1, pb::COMP_NODE)}),
               {"node id 1 is used twice"});
}

TEST(Corrupt, UnknownOrUnsupportedCollective) {
  expect_error(et_bytes({collective(5, 42)}), {"node 5", "unknown collective type 42"});
  expect_error(et_bytes({collective(5, pb::GATHER)}), {"node 5", "GATHER (3) is not supported"});
}

TEST(Corrupt, UnknownNodeType) {
  expect_error(et_bytes({et_node(3, pb::INVALID_NODE)}), {"node 3", "unsupported node type 0"});
}

TEST(Corrupt, UnsupportedVersionOrMissingPeer) {
  pb::GlobalMetadata meta;
  meta.set_version("2.0.0");
  std::ostringstream out;
  google::protobuf::util::SerializeDelimitedToOstream(meta, &out);
  expect_error(out.str(), {"unsupported Chakra schema version '2.0.0'"});
  pb::Node recv = et_node(4, pb::COMM_RECV_NODE);
  et_attr(recv, "comm_size").set_int64_val(8);
  expect_error(et_bytes({recv}), {"node 4", "missing attribute 'comm_src'", "comm_tag"});
}

TEST(Corrupt, IllTypedAttribute) {
  pb::Node n = et_node(2, pb::COMM_COLL_NODE);
  et_attr(n, "comm_type").set_int64_val(0);
  et_attr(n, "comm_size").set_double_val(1.5);
  expect_error(et_bytes({n}), {"node 2", "'comm_size' holds a floating-point value"});
}

// Every integer variant carries comm_size (and comm_type) equally well.
TEST(Attributes, AnyIntegerVariantReads) {
  std::vector<pb::Node> nodes;
  using Setter = void (*)(pb::AttributeProto&);
  const std::vector<Setter> setters = {
      [](pb::AttributeProto& a) { a.set_int32_val(4096); },
      [](pb::AttributeProto& a) { a.set_int64_val(4096); },
      [](pb::AttributeProto& a) { a.set_uint32_val(4096); },
      [](pb::AttributeProto& a) { a.set_uint64_val(4096); },
      [](pb::AttributeProto& a) { a.set_sint32_val(4096); },
      [](pb::AttributeProto& a) { a.set_sint64_val(4096); },
      [](pb::AttributeProto& a) { a.set_fixed32_val(4096); },
      [](pb::AttributeProto& a) { a.set_fixed64_val(4096); },
      [](pb::AttributeProto& a) { a.set_sfixed32_val(4096); },
      [](pb::AttributeProto& a) { a.set_sfixed64_val(4096); },
  };
  for (std::size_t i = 0; i < setters.size(); ++i) {
    pb::Node n = et_node(i, pb::COMM_COLL_NODE);
    et_attr(n, "comm_type").set_uint32_val(pb::ALL_TO_ALL);
    setters[i](et_attr(n, "comm_size"));
    nodes.push_back(n);
  }
  TempDir dir;
  write_bytes(et_path(dir.path() + "/v", 0), et_bytes(nodes));
  const ExecGraph g = read_chakra(dir.path() + "/v");
  ASSERT_EQ(g.graph_of(0).size(), setters.size());
  for (const Node& n : g.graph_of(0).nodes) {
    EXPECT_EQ(n.coll, CollType::kAllToAll);
    EXPECT_EQ(n.bytes, 4096.0);
  }
}

// Random bytes, and random damage to a valid trace: InputError or success, nothing else.
TEST(Fuzz, ArbitraryBytesNeverCrash) {
  google::protobuf::LogSilencer quiet;  // invalid UTF-8 in strings is logged by protobuf
  std::mt19937 rng(1234);
  const std::string valid = et_bytes({collective(0, pb::ALL_REDUCE), et_node(1, pb::COMP_NODE, {0}),
                                      collective(2, pb::ALL_GATHER)});
  int errors = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = valid;
    if (i % 2 == 0) {
      bytes.assign(rng() % 96, '\0');
      for (char& c : bytes) {
        c = static_cast<char>(rng());
      }
    }
    for (std::size_t k = 0; k < 1 + rng() % 4 && !bytes.empty(); ++k) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    errors += decode_error(bytes).empty() ? 0 : 1;
  }
  EXPECT_GT(errors, 1000);
}

// Random damage to rank 0 of the real ring trace (deps, send/recv, duration-only compute).
TEST(Fuzz, DamagedRealTraceNeverCrashes) {
  google::protobuf::LogSilencer quiet;
  const std::string ring =
      std::string(TESSERA_SOURCE_DIR) +
      "/tests/chakra/testdata/custom-ring-allreduce-8npus-1MB/custom_allreduce";
  TempDir dir;
  for (std::int32_t r = 1; r < 8; ++r) {
    write_bytes(et_path(dir.path() + "/bad", r), chakra_test::slurp(et_path(ring, r)));
  }
  const std::string valid = chakra_test::slurp(et_path(ring, 0));
  const std::size_t kNodeBytes = 3000;  // the 35 nodes; the metadata before is MSCCL's XML
  ASSERT_EQ(read_error(dir, valid, 8), "");
  ASSERT_EQ(decode_error(valid, 8), "");
  std::mt19937 rng(99);
  int errors = 0;
  for (int i = 0; i < 500; ++i) {
    std::string bytes = valid;
    for (std::size_t k = 0; k < 1 + rng() % 3; ++k) {  // in the nodes, after the metadata
      bytes[bytes.size() - 1 - rng() % kNodeBytes] = static_cast<char>(rng());
    }
    errors +=
        decode_error(bytes.substr(0, bytes.size() - rng() % 2 * (rng() % 64)), 8).empty() ? 0 : 1;
  }
  EXPECT_GT(errors, 50);
}

}  // namespace
}  // namespace tessera::graph::chakra
