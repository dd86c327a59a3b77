// SPDX-License-Identifier: Apache-2.0
// The same JSON text parsed by Tessera's streaming parser (json_stream.h) and by
// nlohmann::json, each written down as one log of SAX events, so that the two can be
// compared: both must accept exactly the same texts and report the same keys, strings and
// numbers. Used by the unit tests and by the Kineto fuzz target.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/error.h"
#include "measured/byte_source.h"
#include "measured/json_stream.h"

namespace tessera::kineto_test {

inline void log_string(std::string& log, char tag, std::string_view s) {
  log += fmt::format("{}{}:", tag, s.size());
  log.append(s);
}

// JsonStream's handler.
struct StreamLog {
  std::string log;
  void start_object() { log += '{'; }
  void end_object() { log += '}'; }
  void start_array() { log += '['; }
  void end_array() { log += ']'; }
  void key(std::string_view k) { log_string(log, 'k', k); }
  void string(std::string_view s) { log_string(log, 's', s); }
  void integer(std::int64_t v) { log += fmt::format("i{};", v); }
  void unsigned_integer(std::uint64_t v) { log += fmt::format("i{};", v); }
  void floating(double v) { log += fmt::format("f{};", v); }
  void boolean(bool v) { log += v ? "T" : "F"; }
  void null() { log += 'N'; }
};

// nlohmann::json's handler, writing the same log.
struct NlohmannLog : nlohmann::json_sax<nlohmann::json> {
  using json = nlohmann::json;
  std::string log;
  bool null() override {
    log += 'N';
    return true;
  }
  bool boolean(bool v) override {
    log += v ? "T" : "F";
    return true;
  }
  bool number_integer(json::number_integer_t v) override {
    log += fmt::format("i{};", v);
    return true;
  }
  bool number_unsigned(json::number_unsigned_t v) override {
    log += fmt::format("i{};", v);
    return true;
  }
  bool number_float(json::number_float_t v, const std::string& /*text*/) override {
    log += fmt::format("f{};", v);
    return true;
  }
  bool string(std::string& s) override {
    log_string(log, 's', s);
    return true;
  }
  bool binary(json::binary_t& /*b*/) override { return true; }
  bool start_object(std::size_t /*n*/) override {
    log += '{';
    return true;
  }
  bool key(std::string& k) override {
    log_string(log, 'k', k);
    return true;
  }
  bool end_object() override {
    log += '}';
    return true;
  }
  bool start_array(std::size_t /*n*/) override {
    log += '[';
    return true;
  }
  bool end_array() override {
    log += ']';
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }
};

// The event log of `text` read through a `capacity`-byte buffer, or "<error>" (with the
// message in *error) when the parser rejects it.
inline std::string stream_log(std::string_view text, std::size_t capacity,
                              std::string* error = nullptr) {
  measured::ByteSource source(text, "text.json");
  measured::JsonStream stream(source, "", capacity);
  StreamLog h;
  try {
    stream.parse(h);
  } catch (const base::InputError& e) {
    if (error != nullptr) {
      *error = e.what();
    }
    return "<error>";
  }
  return h.log;
}

// What the streaming parser must answer: nlohmann's log, except that a text with a NUL byte
// is never valid JSON (nlohmann's lexer takes a NUL for the end of the input, so it accepts
// "[]\0garbage"; the streaming parser rejects it, as RFC 8259 does).
inline std::string nlohmann_log(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) {
    return "<error>";
  }
  NlohmannLog h;
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &h)) {
    return "<error>";
  }
  return h.log;
}

}  // namespace tessera::kineto_test
