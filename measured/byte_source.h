// SPDX-License-Identifier: Apache-2.0
// Reads a file (or bytes in memory) piece by piece, inflating it on the fly when it is
// gzip-compressed (detected by its magic bytes), so that a trace of any size is read in
// bounded memory.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::measured {

class ByteSource {
 public:
  explicit ByteSource(std::string path);  // throws base::InputError when unreadable
  // Bytes in memory (not copied: they must outlive the source), named `name` in errors.
  ByteSource(std::string_view bytes, std::string name);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Copies up to `capacity` more (decompressed) bytes into `out`; fewer only at the end, 0
  // once everything was read. Throws base::InputError on a read error or a corrupt or
  // truncated gzip stream.
  std::size_t read(char* out, std::size_t capacity);

  // The number of bytes read() will hand out in all when known in advance (plain input:
  // the file's or the memory's size), 0 when not (gzip).
  [[nodiscard]] std::uint64_t plain_size() const { return plain_size_; }
  [[nodiscard]] bool gzipped() const { return gzip_; }
  [[nodiscard]] std::uint64_t file_bytes() const { return file_bytes_; }  // read from disk
  [[nodiscard]] std::uint64_t bytes_out() const { return bytes_out_; }    // handed out
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void start();
  std::size_t read_raw(unsigned char* out, std::size_t capacity);
  std::size_t inflate_into(char* out, std::size_t capacity);
  [[noreturn]] void fail(const std::string& message) const;

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string_view memory_;  // when reading from memory: what is left
  bool gzip_ = false;
  bool zlib_ready_ = false;
  bool stream_end_ = false;  // gzip: the last member ended
  z_stream z_{};
  std::vector<unsigned char> in_;
  std::size_t pending_ = 0;  // plain: bytes sniffed into in_, not yet handed out
  std::size_t pending_at_ = 0;
  std::uint64_t plain_size_ = 0;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t bytes_out_ = 0;
};

}  // namespace tessera::measured
