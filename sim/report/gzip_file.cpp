// SPDX-License-Identifier: Apache-2.0
#include "sim/report/gzip_file.h"

#include <zlib.h>

#include <cstdio>
#include <vector>

#include "base/error.h"

namespace tessera::sim::report {

namespace {
constexpr std::size_t kChunk = std::size_t{1} << 20U;
}  // namespace

struct GzipFile::State {
  z_stream z{};
  std::FILE* file = nullptr;
  std::vector<unsigned char> out = std::vector<unsigned char>(kChunk);
  bool open = false;
};

GzipFile::GzipFile(const std::string& path) : path_(path), z_(std::make_unique<State>()) {
  z_->file = std::fopen(path.c_str(), "wb");
  if (z_->file == nullptr) {
    throw base::InputError(base::SourceLoc{path, 0, 0}, "cannot write file");
  }
  // 15 + 16: a gzip wrapper with an empty header (mtime 0, no name).
  if (deflateInit2(&z_->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    std::fclose(z_->file);
    throw base::InternalError("zlib: deflateInit2 failed");
  }
  z_->open = true;
  buffer_.reserve(kChunk);
}

GzipFile::~GzipFile() {
  if (z_->open) {
    deflateEnd(&z_->z);
    std::fclose(z_->file);
  }
}

void GzipFile::write(std::string_view text) {
  buffer_.append(text);
  bytes_in_ += text.size();
  if (buffer_.size() >= kChunk) {
    deflate_buffer(Z_NO_FLUSH);
  }
}

void GzipFile::deflate_buffer(int flush) {
  z_stream& z = z_->z;
  z.next_in = reinterpret_cast<Bytef*>(buffer_.data());
  z.avail_in = static_cast<uInt>(buffer_.size());
  int rc = Z_OK;
  do {
    z.next_out = z_->out.data();
    z.avail_out = static_cast<uInt>(z_->out.size());
    rc = deflate(&z, flush);
    std::size_t n = z_->out.size() - z.avail_out;
    if (std::fwrite(z_->out.data(), 1, n, z_->file) != n) {
      throw base::InputError(base::SourceLoc{path_, 0, 0}, "write failed");
    }
    bytes_out_ += n;
  } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  buffer_.clear();
}

void GzipFile::close() {
  if (!z_->open) {
    return;
  }
  deflate_buffer(Z_FINISH);
  deflateEnd(&z_->z);
  z_->open = false;
  if (std::fclose(z_->file) != 0) {
    throw base::InputError(base::SourceLoc{path_, 0, 0}, "write failed");
  }
}

}  // namespace tessera::sim::report
