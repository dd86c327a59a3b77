// SPDX-License-Identifier: Apache-2.0
#include "measured/byte_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "base/error.h"

namespace tessera::measured {

namespace {
constexpr std::size_t kChunk = 1U << 20U;
}  // namespace

ByteSource::ByteSource(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    fail(std::string("cannot open the trace: ") + std::strerror(errno));
  }
  start();
}

ByteSource::ByteSource(std::string_view bytes, std::string name)
    : path_(std::move(name)), memory_(bytes) {
  start();
}

ByteSource::~ByteSource() {
  if (zlib_ready_) {
    inflateEnd(&z_);
  }
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void ByteSource::start() {
  std::uint64_t size = memory_.size();
  if (file_ != nullptr) {
    struct stat st {};
    size = ::fstat(::fileno(file_), &st) == 0 && S_ISREG(st.st_mode)
               ? static_cast<std::uint64_t>(st.st_size)
               : kChunk;
  }
  // Small inputs (the fuzz targets' in particular) get a small raw buffer.
  in_.resize(static_cast<std::size_t>(std::clamp<std::uint64_t>(size, 2, kChunk)));
  std::size_t n = read_raw(in_.data(), in_.size());
  gzip_ = n >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) {  // 32: accept gzip headers
      fail("cannot initialise zlib");
    }
    zlib_ready_ = true;
    z_.next_in = in_.data();
    z_.avail_in = static_cast<uInt>(n);
  } else {
    pending_ = n;
    plain_size_ = file_ != nullptr ? size : n + memory_.size();
  }
}

void ByteSource::fail(const std::string& message) const {
  throw base::InputError(base::SourceLoc{path_}, message);
}

std::size_t ByteSource::read_raw(unsigned char* out, std::size_t capacity) {
  if (file_ == nullptr) {
    std::size_t n = std::min(capacity, memory_.size());
    if (n > 0) {
      std::memcpy(out, memory_.data(), n);
    }
    memory_.remove_prefix(n);
    file_bytes_ += n;
    return n;
  }
  std::size_t n = std::fread(out, 1, capacity, file_);
  if (n < capacity && std::ferror(file_) != 0) {
    fail(std::string("read error: ") + std::strerror(errno));
  }
  file_bytes_ += n;
  return n;
}

std::size_t ByteSource::read(char* out, std::size_t capacity) {
  std::size_t n = 0;
  if (!gzip_) {
    if (pending_ > 0) {
      n = std::min(pending_, capacity);
      std::memcpy(out, in_.data() + pending_at_, n);
      pending_ -= n;
      pending_at_ += n;
    }
    if (n < capacity) {
      n += read_raw(reinterpret_cast<unsigned char*>(out) + n, capacity - n);
    }
  } else {
    while (n < capacity && !stream_end_) {
      n += inflate_into(out + n, std::min<std::size_t>(capacity - n, UINT_MAX));
    }
  }
  bytes_out_ += n;
  return n;
}

// One inflate() step into out; may produce nothing (between gzip members).
std::size_t ByteSource::inflate_into(char* out, std::size_t capacity) {
  if (z_.avail_in == 0) {
    std::size_t n = read_raw(in_.data(), in_.size());
    if (n == 0) {
      fail("truncated gzip stream (the file ends inside compressed data)");
    }
    z_.next_in = in_.data();
    z_.avail_in = static_cast<uInt>(n);
  }
  z_.next_out = reinterpret_cast<Bytef*>(out);
  z_.avail_out = static_cast<uInt>(capacity);
  int rc = inflate(&z_, Z_NO_FLUSH);
  std::size_t produced = capacity - z_.avail_out;
  if (rc == Z_STREAM_END) {
    // Concatenated gzip members (as `cat a.gz b.gz` makes) continue the stream.
    if (z_.avail_in == 0) {
      std::size_t n = read_raw(in_.data(), in_.size());
      z_.next_in = in_.data();
      z_.avail_in = static_cast<uInt>(n);
    }
    if (z_.avail_in == 0) {
      stream_end_ = true;
    } else if (inflateReset(&z_) != Z_OK) {
      fail("corrupt gzip stream");
    }
  } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
    fail(std::string("corrupt gzip stream (zlib: ") + (z_.msg != nullptr ? z_.msg : "error") + ")");
  }
  return produced;
}

}  // namespace tessera::measured
