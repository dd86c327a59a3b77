// SPDX-License-Identifier: Apache-2.0
#include "synth/graph/kineto/byte_source.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "sim/base/error.h"

namespace tessera::graph::kineto {

namespace {
constexpr std::size_t kChunk = 1U << 20U;
}  // namespace

ByteSource::ByteSource(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    fail(std::string("cannot open the trace: ") + std::strerror(errno));
  }
  in_.resize(kChunk);
  out_.resize(kChunk);
  std::size_t n = read_raw();
  gzip_ = n >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) {  // 32: accept gzip headers
      fail("cannot initialise zlib");
    }
    z_.next_in = in_.data();
    z_.avail_in = static_cast<uInt>(n);
  } else {
    std::memcpy(out_.data(), in_.data(), n);
    pending_ = n;
  }
}

ByteSource::~ByteSource() {
  if (gzip_) {
    inflateEnd(&z_);
  }
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void ByteSource::fail(const std::string& message) const {
  throw base::InputError(base::SourceLoc{path_}, message);
}

std::size_t ByteSource::read_raw() {
  std::size_t n = std::fread(in_.data(), 1, in_.size(), file_);
  if (n == 0 && std::ferror(file_) != 0) {
    fail(std::string("read error: ") + std::strerror(errno));
  }
  file_bytes_ += n;
  return n;
}

std::pair<const char*, std::size_t> ByteSource::next() {
  if (!gzip_) {
    if (pending_ > 0) {
      std::size_t n = std::exchange(pending_, 0);
      bytes_out_ += n;
      return {out_.data(), n};
    }
    std::size_t n = read_raw();
    bytes_out_ += n;
    return {reinterpret_cast<const char*>(in_.data()), n};
  }
  while (!stream_end_) {
    if (z_.avail_in == 0) {
      std::size_t n = read_raw();
      if (n == 0) {
        fail("truncated gzip stream (the file ends inside compressed data)");
      }
      z_.next_in = in_.data();
      z_.avail_in = static_cast<uInt>(n);
    }
    z_.next_out = reinterpret_cast<Bytef*>(out_.data());
    z_.avail_out = static_cast<uInt>(out_.size());
    int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (as `cat a.gz b.gz` makes) continue the stream.
      if (z_.avail_in == 0) {
        std::size_t n = read_raw();
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(n);
      }
      if (z_.avail_in == 0) {
        stream_end_ = true;
      } else if (inflateReset(&z_) != Z_OK) {
        fail("corrupt gzip stream");
      }
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      fail(std::string("corrupt gzip stream (zlib: ") + (z_.msg != nullptr ? z_.msg : "error") +
           ")");
    }
    std::size_t n = out_.size() - z_.avail_out;
    if (n > 0) {
      bytes_out_ += n;
      return {out_.data(), n};
    }
  }
  return {nullptr, 0};
}

}  // namespace tessera::graph::kineto
