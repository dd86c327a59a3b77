// SPDX-License-Identifier: Apache-2.0
// Broken inputs are base::InputError naming the file: truncated gzip, gzip garbage, text
// that is not JSON, JSON that is not a trace, a trace without GPU activity, a missing file.
// Also: plain JSON, the JSON Array Format and concatenated gzip members read.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "measured/kineto_reader.h"
#include "tests/input_error.h"
#include "tests/kineto/kineto_oracle.h"

namespace tessera::measured {
namespace {

using testing::error_of;

class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_kineto_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string write_gz(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    return p;
  }
  static std::string read_all(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::filesystem::path dir_;
};

constexpr const char* kTiny =
    R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm", "ts": 10, )"
    R"("dur": 5, "args": {"stream": 7, "correlation": 1}}, {"ph": "X", "cat": "cuda_runtime", )"
    R"("name": "cudaLaunchKernel", "ts": 2, "dur": 3, "tid": 1, "args": {"correlation": 1}}]})";

TEST_F(Scratch, TruncatedGzip) {
  std::string full = read_all(kineto_test::testdata("a100-2rank-ddp-rank0.json.gz"));
  std::string p = write("cut.json.gz", full.substr(0, full.size() / 2));
  std::string e = error_of([&] { read_kineto(p); });
  EXPECT_NE(e.find("cut.json.gz"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated gzip"), std::string::npos) << e;
}

TEST_F(Scratch, GzipGarbage) {
  std::string p = write("garbage.json.gz", std::string("\x1f\x8b\x08\x00garbage-bytes-here", 22));
  std::string e = error_of([&] { read_kineto(p); });
  EXPECT_NE(e.find("gzip"), std::string::npos) << e;
  std::string full = read_all(kineto_test::testdata("a100-2rank-ddp-rank0.json.gz"));
  for (std::size_t i = 100; i < 400; ++i) {
    full[i] = static_cast<char>(full[i] ^ 0x5a);
  }
  std::string q = write("flipped.json.gz", full);
  EXPECT_NE(error_of([&] { read_kineto(q); }), "<no error>");
}

TEST_F(Scratch, NotJson) {
  std::string p = write("text.json", "Hello, world");
  std::string e = error_of([&] { read_kineto(p); });
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  std::string q = write("cut.json", std::string(kTiny).substr(0, 60));
  EXPECT_NE(error_of([&] { read_kineto(q); }).find("not valid JSON"), std::string::npos);
  std::string empty = write("empty.json", "");
  EXPECT_NE(error_of([&] { read_kineto(empty); }).find("empty.json"), std::string::npos);
}

TEST_F(Scratch, JsonThatIsNotATrace) {
  std::string p = write("config.json", R"({"model": "gpt", "layers": [1, 2, 3]})");
  std::string e = error_of([&] { read_kineto(p); });
  EXPECT_NE(e.find("no traceEvents"), std::string::npos) << e;
  std::string q = write("number.json", "42");
  EXPECT_NE(error_of([&] { read_kineto(q); }).find("no traceEvents"), std::string::npos);
}

TEST_F(Scratch, TraceWithoutGpuEvents) {
  std::string p = write("cpu.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", )"
                                    R"("name": "aten::mm", "ts": 1, "dur": 2}]})");
  std::string e = error_of([&] { read_kineto(p); });
  EXPECT_NE(e.find("no GPU activity"), std::string::npos) << e;
}

TEST_F(Scratch, MissingFile) {
  std::string e = error_of([&] { read_kineto((dir_ / "absent.json").string()); });
  EXPECT_NE(e.find("absent.json"), std::string::npos) << e;
}

TEST_F(Scratch, PlainGzipArrayFormatAndConcatenatedMembers) {
  KinetoTrace plain = read_kineto(write("tiny.json", kTiny));
  ASSERT_EQ(plain.gpu.size(), 1U);
  EXPECT_EQ(plain.gpu[0].ts_ns, 10'000);
  EXPECT_EQ(plain.gpu[0].stream, 7);
  EXPECT_EQ(plain.gpu[0].category, Category::kGemm);
  EXPECT_EQ(plain.runtime.size(), 1U);
  KinetoTrace gz = read_kineto(write_gz("tiny.json.gz", kTiny));
  EXPECT_EQ(gz.gpu.size(), 1U);
  std::string a = R"([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.5, "dur": 2.25}])";
  KinetoTrace arr = read_kineto(write("array.json", a));
  ASSERT_EQ(arr.gpu.size(), 1U);
  EXPECT_EQ(arr.gpu[0].ts_ns, 1500);
  EXPECT_EQ(arr.gpu[0].dur_ns, 2250);
  // Two gzip members: the JSON split across them.
  std::string half1 = std::string(kTiny).substr(0, 50);
  std::string half2 = std::string(kTiny).substr(50);
  std::string p1 = write_gz("m1.gz", half1);
  std::string p2 = write_gz("m2.gz", half2);
  KinetoTrace cat = read_kineto(write("both.json.gz", read_all(p1) + read_all(p2)));
  EXPECT_EQ(cat.gpu.size(), 1U);
}

// Found by fuzz/kineto_fuzz.cpp: metadata numbers beyond their type (a totalGlobalMem of
// 8.5e30, a rank of 2^40) were converted with undefined behaviour. They read as absent.
TEST(KinetoMetadata, OutOfRangeNumbersReadAsAbsent) {
  std::string text = R"({"deviceProperties": [{"name": "A100", "totalGlobalMem": 8.5e30}],
"distributedInfo": {"rank": 1099511627776, "world_size": 2.0, "pg_config": [{"pg_name": "0",
"pg_size": -1e300, "ranks": [0, 4294967296, 1.5, 1]}]},
"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": 7}}]})";
  KinetoTrace t = read_kineto_bytes(text, "meta.json");
  EXPECT_EQ(t.device_memory, -1);
  EXPECT_EQ(t.dist.rank, -1);
  EXPECT_EQ(t.dist.world_size, 2);
  ASSERT_EQ(t.dist.groups.size(), 1U);
  EXPECT_EQ(t.dist.groups[0].size, -1);
  EXPECT_EQ(t.dist.groups[0].ranks, (std::vector<std::int32_t>{0, 1}));
}

}  // namespace
}  // namespace tessera::measured
