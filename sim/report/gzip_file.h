// SPDX-License-Identifier: Apache-2.0
// A gzip file written in one pass through a buffer (zlib deflate, fastest level). The header
// carries no time stamp or name, so the same bytes in give the same file out.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tessera::sim::report {

class GzipFile {
 public:
  explicit GzipFile(const std::string& path);  // throws base::InputError if it cannot write
  GzipFile(const GzipFile&) = delete;
  GzipFile& operator=(const GzipFile&) = delete;
  ~GzipFile();

  void write(std::string_view text);
  void close();  // flushes; throws base::InputError on a write error
  [[nodiscard]] std::uint64_t bytes_in() const { return bytes_in_; }
  [[nodiscard]] std::uint64_t bytes_out() const { return bytes_out_; }

 private:
  struct State;
  void deflate_buffer(int flush);

  std::string path_;
  std::unique_ptr<State> z_;
  std::string buffer_;
  std::uint64_t bytes_in_ = 0;
  std::uint64_t bytes_out_ = 0;
};

}  // namespace tessera::sim::report
