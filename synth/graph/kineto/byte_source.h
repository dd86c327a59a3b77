// SPDX-License-Identifier: Apache-2.0
// Reads a file in fixed-size chunks, inflating it on the fly when it is gzip-compressed
// (detected by its magic bytes), so that a trace of any size is read in bounded memory.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tessera::graph::kineto {

class ByteSource {
 public:
  explicit ByteSource(std::string path);  // throws base::InputError when unreadable
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // The next chunk of (decompressed) bytes; empty at the end. Throws base::InputError on a
  // corrupt or truncated gzip stream. The pointer stays valid until the next call.
  std::pair<const char*, std::size_t> next();

  [[nodiscard]] bool gzipped() const { return gzip_; }
  [[nodiscard]] std::uint64_t file_bytes() const { return file_bytes_; }  // read from disk
  [[nodiscard]] std::uint64_t bytes_out() const { return bytes_out_; }    // handed out
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::size_t read_raw();
  [[noreturn]] void fail(const std::string& message) const;

  std::string path_;
  std::FILE* file_ = nullptr;
  bool gzip_ = false;
  bool stream_end_ = false;  // gzip: the last member ended
  z_stream z_{};
  std::vector<unsigned char> in_;
  std::vector<char> out_;
  std::size_t pending_ = 0;  // plain: bytes peeked into out_ before the first next()
  std::uint64_t file_bytes_ = 0;
  std::uint64_t bytes_out_ = 0;
};

}  // namespace tessera::graph::kineto
