// SPDX-License-Identifier: Apache-2.0
// Kineto read speed: writes a synthetic trace of about N MiB (default 1024) of kernel,
// runtime and CPU-operator events, plain and gzip-compressed, reads each with the streaming
// reader, and prints MB/s of JSON and the peak-RSS growth (which stays far below the file
// size: no document tree is built, CPU operators are skipped while reading).
// Usage: build/bench/kineto_read_bench [MiB] [DIR]
//        build/bench/kineto_read_bench --file TRACE [runs]   (reads an existing trace)
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "measured/kineto_reader.h"

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// One iteration's worth of events: a launch, its kernel, and CPU operators around it.
std::string chunk(long long i) {
  long long ts = 1'000'000 + i * 20;
  return fmt::format(
      R"({{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": {}, )"
      R"("dur": 15, "args": {{"External id": {}, "Sequence number": {}, "Fwd thread id": 0, )"
      R"("Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["float", "float"]}}}},
{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, )"
      R"("ts": {}, "dur": 4, "args": {{"External id": {}, "cbid": 211, "correlation": {}}}}},
{{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8", )"
      R"("pid": 0, "tid": 7, "ts": {}, "dur": 12.5, "args": {{"External id": {}, "queued": 0, )"
      R"("device": 0, "context": 1, "stream": 7, "correlation": {}, "registers per thread": 96, )"
      R"("shared memory": 41744, "grid": [24, 1, 1], "block": [544, 1, 1]}}}},
{{"ph": "f", "id": {}, "pid": 0, "tid": 7, "ts": {}, "cat": "ac2g", "name": "ac2g", "bp": "e"}},
)",
      ts, i, i, ts + 2, i, i, ts + 8, i, i, i, ts + 8);
}

template <typename Write>
void generate(double mib, Write write) {
  write(R"({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
)");
  auto target = static_cast<long long>(mib * 1024 * 1024);
  long long written = 0;
  long long i = 0;
  std::string buf;
  while (written < target) {
    buf.clear();
    for (int k = 0; k < 256; ++k) {
      buf += chunk(i++);
    }
    write(buf);
    written += static_cast<long long>(buf.size());
  }
  write(R"({"ph": "i", "name": "end", "ts": 0}]}
)");
}

void bench(const std::string& path, const char* label) {
  double rss0 = peak_rss_mib();
  auto t0 = std::chrono::steady_clock::now();
  auto t = tessera::measured::read_kineto(path);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double mb = static_cast<double>(t.json_bytes) / 1e6;
  double file_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  fmt::print(
      "{:<6} {:8.1f} MB of JSON ({:.1f} MB on disk), {} events, {} kernels kept: {:.2f} s, "
      "{:.0f} MB/s of JSON; peak RSS grew {:.0f} MiB (now {:.0f} MiB)\n",
      label, mb, file_mb, t.events, t.gpu.size(), s, mb / s, peak_rss_mib() - rss0, peak_rss_mib());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--file") {
    int runs = argc > 3 ? std::atoi(argv[3]) : 1;
    try {
      for (int i = 0; i < runs; ++i) {
        bench(argv[2], "file");
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", e.what());
      return 2;
    }
    return 0;
  }
  double mib = argc > 1 ? std::atof(argv[1]) : 1024.0;
  std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  std::string plain = (dir / fmt::format("kineto_bench_{}.json", ::getpid())).string();
  std::string gz = plain + ".gz";
  {
    std::FILE* f = std::fopen(plain.c_str(), "wb");
    gzFile g = gzopen(gz.c_str(), "wb1");
    if (f == nullptr || g == nullptr) {
      fmt::print(stderr, "cannot write into {}\n", dir.string());
      return 2;
    }
    generate(mib, [&](const std::string& s) {
      std::fwrite(s.data(), 1, s.size(), f);
      gzwrite(g, s.data(), static_cast<unsigned>(s.size()));
    });
    std::fclose(f);
    gzclose(g);
  }
  try {
    bench(plain, "plain");
    bench(gz, "gzip");
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
  }
  std::filesystem::remove(plain);
  std::filesystem::remove(gz);
  return 0;
}
