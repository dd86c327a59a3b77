// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/et_decode.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "graph/chakra/et_attrs.h"
#include "graph/chakra/et_def.pb.h"

namespace tessera::graph::chakra {

namespace pb = ChakraProtoMsg;

static_assert(static_cast<int>(EtNodeType::kCommColl) == pb::COMM_COLL_NODE);
static_assert(static_cast<int>(EtCollType::kBarrier) == pb::BARRIER);
static_assert(kNumEtCollTypes == pb::CollectiveCommType_ARRAYSIZE);

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& message,
                       const std::string& hint = "") {
  throw base::InputError(base::SourceLoc{path}, message, hint);
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b';
}

std::string gunzip(std::string_view bytes, const std::string& path) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    fail(path, "gzip-compressed trace larger than 2 GiB", "decompress it first");
  }
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::GzipInputStream gz(&raw, google::protobuf::io::GzipInputStream::GZIP);
  std::string out;
  const void* chunk = nullptr;
  int size = 0;
  while (gz.Next(&chunk, &size)) {
    out.append(static_cast<const char*>(chunk), static_cast<std::size_t>(size));
  }
  if (gz.ZlibErrorCode() < 0) {
    fail(path, "corrupt gzip stream");
  }
  return out;
}

// Walks the varint32 length prefixes of a delimited stream.
class FrameReader {
 public:
  FrameReader(std::string_view data, const std::string& path) : data_(data), path_(path) {}
  [[nodiscard]] bool done() const { return pos_ >= data_.size(); }
  [[nodiscard]] std::size_t offset() const { return pos_; }

  // The next message; `where` says which one it should be, for messages ("after node 4").
  std::string_view next(const std::string& where) {
    const std::size_t start = pos_;
    const std::uint64_t length = read_length(start, where);
    if (length > data_.size() - pos_) {
      fail(path_, "truncated message at byte " + std::to_string(start) + " (" + where +
                      "): its prefix declares " + std::to_string(length) + " bytes but only " +
                      std::to_string(data_.size() - pos_) + " remain");
    }
    if (length > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      fail(path_,
           "message at byte " + std::to_string(start) + " (" + where + ") is larger than 2 GiB");
    }
    std::string_view frame = data_.substr(pos_, static_cast<std::size_t>(length));
    pos_ += static_cast<std::size_t>(length);
    return frame;
  }

 private:
  std::uint64_t read_length(std::size_t start, const std::string& where) {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (pos_ >= data_.size()) {
        fail(path_,
             "truncated length prefix at byte " + std::to_string(start) + " (" + where + ")");
      }
      auto byte = static_cast<unsigned char>(data_[pos_++]);
      value |= static_cast<std::uint64_t>(byte & 0x7FU) << static_cast<unsigned>(shift);
      if ((byte & 0x80U) == 0) {
        if (value > std::numeric_limits<std::uint32_t>::max()) {
          break;
        }
        return value;
      }
    }
    fail(path_,
         "varint overflow in the length prefix at byte " + std::to_string(start) + " (" + where +
             "): longer than 32 bits",
         "is this a Chakra .et file (varint32-delimited protobuf)?");
  }

  std::string_view data_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

template <typename Repeated>
std::vector<EtAttr> to_attrs(const Repeated& attrs) {
  std::vector<EtAttr> out;
  out.reserve(static_cast<std::size_t>(attrs.size()));
  for (const auto& p : attrs) {
    out.push_back(to_attr(p));
  }
  return out;
}

EtNode to_node(const pb::Node& p) {
  EtNode n;
  n.id = p.id();
  n.name = p.name();
  n.type = p.type();
  n.data_deps.assign(p.data_deps().begin(), p.data_deps().end());
  n.ctrl_deps.assign(p.ctrl_deps().begin(), p.ctrl_deps().end());
  n.start_time_micros = p.start_time_micros();
  n.duration_micros = p.duration_micros();
  n.attrs = to_attrs(p.attr());
  return n;
}

// A missing version is accepted: ASTRA-sim's MSCCL converter leaves it out (its metadata
// names the schema in a "schema" attribute instead).
void check_version(const EtTrace& t) {
  if (!t.version.empty() && t.version.rfind("0.", 0) != 0) {
    fail(t.path, "unsupported Chakra schema version '" + t.version + "'",
         "Tessera reads schema 0.x (e.g. 0.0.4)");
  }
}

void decode_metadata(FrameReader& frames, EtTrace& t) {
  if (frames.done()) {
    fail(t.path, "empty file: no GlobalMetadata message");
  }
  std::string_view frame = frames.next("GlobalMetadata");
  pb::GlobalMetadata meta;
  if (!meta.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
    fail(t.path, "malformed GlobalMetadata message at byte 0");
  }
  t.version = meta.version();
  t.metadata = to_attrs(meta.attr());
  check_version(t);
}

std::string after_last(const EtTrace& t) {
  return t.nodes.empty() ? std::string("the first node") : "after " + describe(t.nodes.back());
}

}  // namespace

EtTrace decode_et(std::string_view bytes, const std::string& path) {
  std::string inflated = is_gzip(bytes) ? gunzip(bytes, path) : std::string();
  FrameReader frames(is_gzip(bytes) ? std::string_view(inflated) : bytes, path);
  EtTrace t;
  t.path = path;
  decode_metadata(frames, t);
  pb::Node node;
  while (!frames.done()) {
    const std::size_t offset = frames.offset();
    std::string_view frame = frames.next(after_last(t));
    if (frame.empty() || !node.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
      fail(path, std::string(frame.empty() ? "empty" : "malformed") + " Node message at byte " +
                     std::to_string(offset) + " (" + after_last(t) + ")");
    }
    t.nodes.push_back(to_node(node));
  }
  return t;
}

std::string load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail(path, "cannot open the file");
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) {
    fail(path, "cannot read the file");
  }
  return std::move(bytes).str();
}

}  // namespace tessera::graph::chakra
