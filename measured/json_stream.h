// SPDX-License-Identifier: Apache-2.0
// A strict, streaming JSON parser over a ByteSource, for traces of any size in bounded
// memory. It accepts what nlohmann::json's parser accepts (RFC 8259: UTF-8 checked, an
// optional byte-order mark, no comments, nothing but whitespace after the root value; a
// number that overflows a double is an error), with one difference: nlohmann stops reading
// at a NUL byte, so it accepts "[]\0junk", which this parser rejects. It reports what it
// reads to a handler as SAX events, without building anything and without allocating per
// token: strings are views into the read buffer (decoded into a reused scratch string only
// when they contain escapes), valid until the next event. Nesting uses an explicit stack
// (no recursion).
//
// The handler provides:
//   start_object() end_object() start_array() end_array()
//   key(std::string_view) string(std::string_view)
//   integer(std::int64_t)            an integer that fits int64
//   unsigned_integer(std::uint64_t)  a positive integer above INT64_MAX that fits uint64
//   floating(double)                 any other number (finite)
//   boolean(bool) null()
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/error.h"
#include "measured/byte_source.h"

namespace tessera::measured {

class JsonStream {
 public:
  static constexpr std::size_t kDefaultCapacity = 1U << 20U;

  // `hint` is appended to every syntax error. The buffer starts at `capacity` bytes (or
  // the input's size when it is known and smaller) and grows only to hold a token longer
  // than half of it (tests use tiny buffers to move every token across a refill).
  JsonStream(ByteSource& source, std::string hint, std::size_t capacity = kDefaultCapacity)
      : source_(source), hint_(std::move(hint)), initial_capacity_(capacity < 1 ? 1 : capacity) {}

  // Parses the whole input. Throws base::InputError naming the source and the byte offset
  // ("not valid JSON (byte N): ...") on the first syntax error, or whatever the source or
  // the handler throws.
  template <typename Handler>
  void parse(Handler& h);

 private:
  // Bytes readable past the data's end: the NUL sentinel plus a full vector load.
  static constexpr std::size_t kPadding = 64;

  [[noreturn]] void fail(const char* at, std::string_view message) const {
    auto offset = base_ + static_cast<std::uint64_t>(at - buf_.get());
    throw base::InputError(base::SourceLoc{source_.path()},
                           fmt::format("not valid JSON (byte {}): {}", offset, message), hint_);
  }
  [[noreturn]] void unexpected(const char* at, std::string_view expected) const {
    if (at == end_) {
      fail(at, fmt::format("unexpected end of input; expected {}", expected));
    }
    auto c = static_cast<unsigned char>(*at);
    if (c >= 0x21 && c < 0x7f) {
      fail(at, fmt::format("unexpected '{}'; expected {}", static_cast<char>(c), expected));
    }
    fail(at, fmt::format("unexpected byte 0x{:02x}; expected {}", c, expected));
  }

  // Moves [keep, end) to the front of the buffer and appends more input after it (growing
  // the buffer when the kept bytes fill half of it). Returns false, leaving `keep` alone,
  // when the input is exhausted; otherwise `keep` points to the same byte's new place.
  bool refill(const char*& keep);
  // Ensures n bytes at p when the input has them; false when it ends earlier.
  bool ensure(const char*& p, std::size_t n) {
    while (static_cast<std::size_t>(end_ - p) < n) {
      if (!refill(p)) {
        return false;
      }
    }
    return true;
  }

  static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  const char* skip_ws(const char* p) {
    for (;;) {
      while (is_ws(*p)) {
        ++p;
      }
      if (p != end_ || !refill(p)) {
        return p;
      }
    }
  }
  // The first byte at or after p that may end a run of plain string bytes: '"', '\\', a
  // control character (including the sentinel at end_) or a non-ASCII byte.
  static const char* scan_plain(const char* p);
  // Validates the UTF-8 sequence at q (a byte >= 0x80) and returns its end; `tok` is the
  // start of the token, kept (and moved along) if the buffer has to be refilled.
  const char* utf8(const char*& tok, const char* q);

  template <bool kKey, typename Handler>
  const char* string(const char* p, Handler& h);
  template <bool kKey, typename Handler>
  const char* escaped_string(const char* p, const char* q, Handler& h);
  const char* escape(const char* p);  // at '\\': appends the decoded character to scratch_
  template <typename Handler>
  const char* number(const char* p, Handler& h);
  const char* literal(const char* p, std::string_view word);
  // At the '"' of a member's key: parses the key and the ':' and skips whitespace after it.
  template <typename Handler>
  const char* member(const char* p, Handler& h) {
    if (*p != '"') {
      unexpected(p, "a string (an object member's name)");
    }
    p = skip_ws(string<true>(p, h));
    if (*p != ':') {
      unexpected(p, "':' after an object member's name");
    }
    return skip_ws(p + 1);
  }

  ByteSource& source_;
  std::string hint_;
  std::size_t initial_capacity_;
  std::unique_ptr<char[]> buf_;
  std::size_t capacity_ = 0;  // bytes of data the buffer holds at most (plus kPadding)
  const char* end_ = nullptr;
  bool eof_ = false;
  std::uint64_t base_ = 0;  // input offset of buf_[0]
  std::string scratch_;
  std::vector<char> stack_;  // '{' or '[' per open container
};

inline bool JsonStream::refill(const char*& keep) {
  if (eof_) {
    return false;
  }
  auto kept = static_cast<std::size_t>(end_ - keep);
  auto shift = static_cast<std::size_t>(keep - buf_.get());
  if (kept * 2 > capacity_) {
    std::size_t grown = capacity_ * 2;
    auto bigger = std::make_unique<char[]>(grown + kPadding);
    std::memcpy(bigger.get(), keep, kept);
    buf_ = std::move(bigger);
    capacity_ = grown;
  } else if (kept > 0) {
    std::memmove(buf_.get(), keep, kept);
  }
  base_ += shift;
  std::size_t n = source_.read(buf_.get() + kept, capacity_ - kept);
  end_ = buf_.get() + kept + n;
  buf_[kept + n] = '\0';
  keep = buf_.get();
  if (n == 0) {
    eof_ = true;
    return false;
  }
  return true;
}

inline const char* JsonStream::scan_plain(const char* p) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  for (;;) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also catches non-ASCII.
    __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                               _mm_cmplt_epi8(v, space));
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) {
      return p + __builtin_ctz(mask);
    }
    p += 16;
  }
#else
  for (;;) {
    auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) {
      return p;
    }
    ++p;
  }
#endif
}

inline const char* JsonStream::utf8(const char*& tok, const char* q) {
  auto b0 = static_cast<unsigned char>(*q);
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3;
    lo = b0 == 0xe0 ? 0xa0 : 0x80;  // no overlong forms
    hi = b0 == 0xed ? 0x9f : 0xbf;  // no UTF-16 surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4;
    lo = b0 == 0xf0 ? 0x90 : 0x80;  // no overlong forms
    hi = b0 == 0xf4 ? 0x8f : 0xbf;  // nothing above U+10FFFF
  } else {
    fail(q, fmt::format("invalid UTF-8 byte 0x{:02x} in a string", b0));
  }
  while (static_cast<std::size_t>(end_ - q) < len) {
    auto offset = q - tok;
    if (!refill(tok)) {
      fail(q, "truncated UTF-8 sequence at the end of the input");
    }
    q = tok + offset;
  }
  for (std::size_t i = 1; i < len; ++i) {
    auto b = static_cast<unsigned char>(q[i]);
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf)) {
      fail(q, "invalid UTF-8 sequence in a string");
    }
  }
  return q + len;
}

template <bool kKey, typename Handler>
const char* JsonStream::string(const char* p, Handler& h) {
  // p: the opening quote, kept in the buffer until the string ends.
  const char* q = p + 1;
  for (;;) {
    q = scan_plain(q);
    char c = *q;
    if (c == '"') {
      std::string_view s(p + 1, static_cast<std::size_t>(q - p - 1));
      if constexpr (kKey) {
        h.key(s);
      } else {
        h.string(s);
      }
      return q + 1;
    }
    if (c == '\\') {
      return escaped_string<kKey>(p, q, h);
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      q = utf8(p, q);
      continue;
    }
    if (q == end_) {
      auto offset = q - p;
      if (!refill(p)) {
        fail(q, "unterminated string at the end of the input");
      }
      q = p + offset;
      continue;
    }
    fail(q, fmt::format("unescaped control character 0x{:02x} in a string",
                        static_cast<unsigned char>(c)));
  }
}

// A string with escapes: decoded into scratch_, so only the unread part has to stay in the
// buffer.
template <bool kKey, typename Handler>
const char* JsonStream::escaped_string(const char* p, const char* q, Handler& h) {
  scratch_.assign(p + 1, q);
  for (;;) {
    char c = *q;
    if (c == '"') {
      if constexpr (kKey) {
        h.key(scratch_);
      } else {
        h.string(scratch_);
      }
      return q + 1;
    }
    if (c == '\\') {
      q = escape(q);
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      const char* start = q;
      const char* stop = utf8(start, q);
      scratch_.append(start, stop);
      q = stop;
    } else if (q == end_) {
      if (!refill(q)) {
        fail(q, "unterminated string at the end of the input");
      }
    } else {
      fail(q, fmt::format("unescaped control character 0x{:02x} in a string",
                          static_cast<unsigned char>(c)));
    }
    const char* run = q;
    q = scan_plain(q);
    scratch_.append(run, q);
  }
}

inline const char* JsonStream::escape(const char* p) {
  if (!ensure(p, 2)) {
    fail(p, "unterminated string at the end of the input");
  }
  char e = p[1];
  switch (e) {
    case '"':
    case '\\':
    case '/':
      scratch_.push_back(e);
      return p + 2;
    case 'b':
      scratch_.push_back('\b');
      return p + 2;
    case 'f':
      scratch_.push_back('\f');
      return p + 2;
    case 'n':
      scratch_.push_back('\n');
      return p + 2;
    case 'r':
      scratch_.push_back('\r');
      return p + 2;
    case 't':
      scratch_.push_back('\t');
      return p + 2;
    case 'u':
      break;
    default:
      fail(p, "invalid escape in a string (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
  }
  auto hex4 = [&](const char* at) -> std::uint32_t {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = at[i];
      std::uint32_t d = 0;
      if (c >= '0' && c <= '9') {
        d = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        fail(at - 2, "'\\u' must be followed by four hexadecimal digits");
      }
      v = v * 16 + d;
    }
    return v;
  };
  if (!ensure(p, 6)) {
    fail(p, "'\\u' must be followed by four hexadecimal digits");
  }
  std::uint32_t cp = hex4(p + 2);
  std::size_t used = 6;
  if (cp >= 0xdc00 && cp <= 0xdfff) {
    fail(p, "a low surrogate (\\uDC00-\\uDFFF) without a high surrogate before it");
  }
  if (cp >= 0xd800 && cp <= 0xdbff) {
    if (!ensure(p, 12) || p[6] != '\\' || p[7] != 'u') {
      fail(p, "a high surrogate (\\uD800-\\uDBFF) must be followed by a low surrogate");
    }
    std::uint32_t lo = hex4(p + 8);
    if (lo < 0xdc00 || lo > 0xdfff) {
      fail(p, "a high surrogate (\\uD800-\\uDBFF) must be followed by a low surrogate");
    }
    cp = 0x10000 + ((cp - 0xd800) << 10U) + (lo - 0xdc00);
    used = 12;
  }
  auto put = [&](std::uint32_t b) { scratch_.push_back(static_cast<char>(b)); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xc0 | (cp >> 6U));
    put(0x80 | (cp & 0x3fU));
  } else if (cp < 0x10000) {
    put(0xe0 | (cp >> 12U));
    put(0x80 | ((cp >> 6U) & 0x3fU));
    put(0x80 | (cp & 0x3fU));
  } else {
    put(0xf0 | (cp >> 18U));
    put(0x80 | ((cp >> 12U) & 0x3fU));
    put(0x80 | ((cp >> 6U) & 0x3fU));
    put(0x80 | (cp & 0x3fU));
  }
  return p + used;
}

template <typename Handler>
const char* JsonStream::number(const char* p, Handler& h) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  // One pass over the grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; a number
  // cut by the end of the buffer is parsed again once the buffer is refilled. Whatever
  // follows the number is the caller's to check.
  for (;;) {
    const char* r = p;
    bool negative = *r == '-';
    if (negative) {
      ++r;
    }
    std::uint64_t v = 0;
    bool wide = false;  // more than 64 bits
    bool fractional = false;
    const char* bad = nullptr;
    if (*r == '0') {
      ++r;
    } else if (digit(*r)) {
      const char* first = r;
      while (digit(*r)) {
        v = v * 10 + static_cast<std::uint64_t>(*r - '0');
        ++r;
      }
      if (r - first >= 20) {  // recount exactly: 20 digits may or may not fit
        v = 0;
        for (const char* c = first; c < r; ++c) {
          auto d = static_cast<std::uint64_t>(*c - '0');
          if (v > (UINT64_MAX - d) / 10) {
            wide = true;
            break;
          }
          v = v * 10 + d;
        }
      }
    } else {
      bad = r;
    }
    if (bad == nullptr && *r == '.') {
      ++r;
      if (!digit(*r)) {
        bad = r;
      }
      while (digit(*r)) {
        ++r;
      }
      fractional = true;
    }
    if (bad == nullptr && (*r == 'e' || *r == 'E')) {
      ++r;
      if (*r == '+' || *r == '-') {
        ++r;
      }
      if (!digit(*r)) {
        bad = r;
      }
      while (digit(*r)) {
        ++r;
      }
      fractional = true;
    }
    if (r == end_ && !eof_) {  // the number may go on in the next piece of input
      refill(p);
      continue;
    }
    if (bad != nullptr) {
      fail(bad, "invalid number");
    }
    if (!fractional && !wide) {
      if (!negative) {
        if (v <= static_cast<std::uint64_t>(INT64_MAX)) {
          h.integer(static_cast<std::int64_t>(v));
        } else {
          h.unsigned_integer(v);
        }
        return r;
      }
      if (v <= static_cast<std::uint64_t>(INT64_MAX)) {
        h.integer(-static_cast<std::int64_t>(v));
        return r;
      }
      if (v == static_cast<std::uint64_t>(INT64_MAX) + 1) {
        h.integer(INT64_MIN);
        return r;
      }
    }
    double d = 0;
    auto [stop, ec] = std::from_chars(p, r, d);
    if (ec != std::errc() || stop != r) {  // out of range: strtod, as nlohmann::json does
      std::string text(p, r);
      d = std::strtod(text.c_str(), nullptr);
    }
    if (!std::isfinite(d)) {
      fail(p, fmt::format("number overflow: {} does not fit a double",
                          std::string_view(p, static_cast<std::size_t>(r - p))));
    }
    h.floating(d);
    return r;
  }
}

inline const char* JsonStream::literal(const char* p, std::string_view word) {
  if (!ensure(p, word.size()) || std::memcmp(p, word.data(), word.size()) != 0) {
    fail(p, fmt::format("invalid literal; expected '{}'", word));
  }
  return p + word.size();
}

template <typename Handler>
void JsonStream::parse(Handler& h) {
  capacity_ = initial_capacity_;
  if (std::uint64_t size = source_.plain_size(); size > 0 && size < capacity_) {
    capacity_ = static_cast<std::size_t>(size);  // a small input: a buffer of its size
  }
  buf_ = std::make_unique<char[]>(capacity_ + kPadding);
  end_ = buf_.get();
  eof_ = false;
  base_ = 0;
  stack_.clear();
  const char* p = buf_.get();
  ensure(p, 3);
  if (static_cast<unsigned char>(*p) == 0xef) {  // a UTF-8 byte-order mark
    if (end_ - p < 3 || static_cast<unsigned char>(p[1]) != 0xbb ||
        static_cast<unsigned char>(p[2]) != 0xbf) {
      fail(p, "invalid byte-order mark (must be EF BB BF)");
    }
    p += 3;
  }
  p = skip_ws(p);
value:  // p: the first byte of a value
  switch (*p) {
    case '{':
      h.start_object();
      p = skip_ws(p + 1);
      if (*p == '}') {
        ++p;
        h.end_object();
        break;
      }
      stack_.push_back('{');
      p = member(p, h);
      goto value;
    case '[':
      h.start_array();
      p = skip_ws(p + 1);
      if (*p == ']') {
        ++p;
        h.end_array();
        break;
      }
      stack_.push_back('[');
      goto value;
    case '"':
      p = string<false>(p, h);
      break;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      p = number(p, h);
      break;
    case 't':
      p = literal(p, "true");
      h.boolean(true);
      break;
    case 'f':
      p = literal(p, "false");
      h.boolean(false);
      break;
    case 'n':
      p = literal(p, "null");
      h.null();
      break;
    default:
      unexpected(p, "a value");
  }
  // After a value: close containers until the next value (or the end).
  for (;;) {
    p = skip_ws(p);
    if (stack_.empty()) {
      if (p != end_) {
        unexpected(p, "the end of the input after the JSON value");
      }
      return;
    }
    if (stack_.back() == '{') {
      if (*p == ',') {
        p = member(skip_ws(p + 1), h);
        goto value;
      }
      if (*p != '}') {
        unexpected(p, "',' or '}' in an object");
      }
      ++p;
      stack_.pop_back();
      h.end_object();
    } else {
      if (*p == ',') {
        p = skip_ws(p + 1);
        goto value;
      }
      if (*p != ']') {
        unexpected(p, "',' or ']' in an array");
      }
      ++p;
      stack_.pop_back();
      h.end_array();
    }
  }
}

}  // namespace tessera::measured
