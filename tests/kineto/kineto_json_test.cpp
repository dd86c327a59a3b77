// SPDX-License-Identifier: Apache-2.0
// The streaming JSON parser under the Kineto reader accepts exactly what nlohmann::json
// accepts and reports the same events, whatever the buffer size: tricky valid and invalid
// texts, and random documents, each read through buffers of 1 byte and up (so that every
// token is cut by a refill somewhere) and compared with nlohmann's SAX parse.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "measured/kineto_reader.h"
#include "tests/input_error.h"
#include "tests/kineto/json_log.h"

namespace tessera::measured {
namespace {

using kineto_test::nlohmann_log;
using kineto_test::stream_log;
using testing::error_of;

const std::vector<std::size_t> kCapacities = {1, 2, 3, 4, 5, 7, 11, 16, 17, 31, 64, 1U << 20U};

void expect_same(const std::string& text) {
  std::string expected = nlohmann_log(text);
  for (std::size_t capacity : kCapacities) {
    std::string error;
    std::string got = stream_log(text, capacity, &error);
    ASSERT_EQ(got, expected) << "text: " << ::testing::PrintToString(text) << "\ncapacity "
                             << capacity << ": " << error;
  }
}

TEST(JsonStream, AgreesWithNlohmannOnTrickyTexts) {
  const std::vector<std::string> texts = {
      // Valid.
      "{}", "[]", " \t\r\n[ ] ", "0", "-0", "1", "-1", "0.5", "-0.0e+0", "1E5", "1e-5",
      "123456789012345678", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "18446744073709551615", "18446744073709551616",
      "123456789012345678901234567890", "1e308", "1e-400", "4.9e-324", "2.2250738585072011e-308",
      "0.1", "3.141592653589793238462643383279", "true", "false", "null", R"("")",
      R"("a\"b\\c\/d\be\ff\ng\rh\ti")", R"("\u0041\u00e9")", R"("\u20AC\ud83d\ude00")",
      R"("\u0000")", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\x7f\"", "\xef\xbb\xbf{}",
      R"({"a":1,"b":[true,false,null],"c":{"d":"e"}})", R"([[[[[[]]]]],{},[{}]])",
      R"({"a":1,"a":2})", R"({"traceEvents":[]})",
      // Invalid.
      "", " ", "{", "}", "[", "]", "[1,]", "[,1]", "{,}", R"({"a"})", R"({"a":})", R"({"a" 1})",
      R"({a:1})", "{'a':1}", "[1 2]", "01", "-", "-a", "1.", ".5", "1e", "1e+", "+1", "1.5.5",
      "0x10", "1e400", "-1e400", "NaN", "Infinity", "tru", "truex", "nul", "nulll", "[true false]",
      "\"abc", "\"a\nb\"", "\"a\tb\"", R"("\x")", R"("\u12")", R"("\u12g4")", R"("\ud800")",
      R"("\ud800\u0041")", R"("\udc00")", R"("\ud800\")", "\"\x80\"", "\"\xc0\xaf\"", "\"\xc3\"",
      "\"\xe0\x80\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
      "\"\xff\"", "\xef\xbb{}", "\xef{}", std::string("[1,\0]", 5), std::string("\"a\0b\"", 5),
      std::string("[]\0x", 4), std::string("{}\0", 3), "[] []", "{} x", "[1]]", "// comment\n{}",
      "/* c */ []", "[1,2", R"({"a":1,)", "\x1f\x8c"};
  for (const std::string& text : texts) {
    expect_same(text);
  }
}

// Random documents from a small grammar, some of them broken by one byte.
std::string random_value(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const std::vector<std::string> kStrings = {R"("")",
                                                    R"("name")",
                                                    R"("ProfilerStep#3")",
                                                    R"("a\"b")",
                                                    R"("\u00e9\n")",
                                                    "\"\xe2\x82\xac\"",
                                                    R"("\ud83d\ude00")",
                                                    R"("long string with spaces and words")"};
  static const std::vector<std::string> kNumbers = {"0",
                                                    "-1",
                                                    "12.5",
                                                    "1e3",
                                                    "-0.25E-2",
                                                    "9223372036854775807",
                                                    "18446744073709551616",
                                                    "1700000000000000"};
  switch (depth > 3 ? pick(4) : pick(6)) {
    case 0:
      return kStrings[static_cast<std::size_t>(pick(static_cast<int>(kStrings.size())))];
    case 1:
      return kNumbers[static_cast<std::size_t>(pick(static_cast<int>(kNumbers.size())))];
    case 2:
      return std::vector<std::string>{"true", "false", "null"}[static_cast<std::size_t>(pick(3))];
    case 3:
      return pick(2) == 0 ? "[]" : "{}";
    case 4: {
      std::string s = "[";
      int n = pick(5);
      for (int i = 0; i < n; ++i) {
        s += (i > 0 ? ", " : "") + random_value(rng, depth + 1);
      }
      return s + "]";
    }
    default: {
      std::string s = "{";
      int n = pick(5);
      for (int i = 0; i < n; ++i) {
        s += (i > 0 ? ",\n " : "") + kStrings[static_cast<std::size_t>(pick(4))] + ": " +
             random_value(rng, depth + 1);
      }
      return s + "}";
    }
  }
}

TEST(JsonStream, AgreesWithNlohmannOnRandomDocuments) {
  std::mt19937 rng(20240607);
  const std::string kBytes = "{}[]\",:0123456789.eE+-\\u tfn\x80\xff";
  for (int i = 0; i < 1500; ++i) {
    std::string text = random_value(rng, 0);
    if (i % 2 == 1 && !text.empty()) {
      std::size_t at = rng() % text.size();
      char c = kBytes[rng() % kBytes.size()];
      switch (rng() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          text.erase(at, 1);
      }
    }
    expect_same(text);
  }
}

TEST(JsonStream, ErrorsNameTheFileAndTheByte) {
  std::string e = error_of([] { read_kineto_bytes("{\"traceEvents\": [1, 2,]}", "t.json"); });
  EXPECT_NE(e.find("t.json"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid JSON (byte 22)"), std::string::npos) << e;
}

// Kineto fields with escapes and non-ASCII names, and a trace large enough to cross the
// reader's own buffer many times, read the same through the file and the memory source.
TEST(JsonStream, TraceFieldsAcrossBuffers) {
  std::string text = R"({"traceEvents": [)";
  const int kEvents = 40000;
  for (int i = 0; i < kEvents; ++i) {
    text += fmt::format(
        R"({{"ph": "X", "c\u0061t": "kernel", "name": "g\u00e9mm_{}\"x\"", "ts": {}, )"
        R"("dur": {}.{}, "args": {{"pad": "{}", "stream": {}, "nested": [{{"stream": 99}}]}}}},)",
        i % 7, 1000 + i, i % 13, i % 10, std::string(static_cast<std::size_t>(i % 97), 'p'), i % 3);
  }
  text += R"({"ph": "i", "name": "end"}]})";
  KinetoTrace t = read_kineto_bytes(text, "big.json");
  ASSERT_EQ(t.gpu.size(), static_cast<std::size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) {
    const GpuActivity& a = t.gpu[static_cast<std::size_t>(i)];
    ASSERT_EQ(a.ts_ns, (1000 + i) * 1000LL) << i;
    ASSERT_EQ(a.dur_ns, (i % 13) * 1000LL + (i % 10) * 100LL) << i;
    ASSERT_EQ(a.stream, i % 3) << i;
    ASSERT_EQ(t.name_of(a), fmt::format("g\xc3\xa9mm_{}\"x\"", i % 7)) << i;
  }
  EXPECT_EQ(t.events, static_cast<std::uint64_t>(kEvents + 1));
  EXPECT_EQ(t.json_bytes, text.size());
}

}  // namespace
}  // namespace tessera::measured
