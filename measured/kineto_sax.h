// SPDX-License-Identifier: Apache-2.0
// The handler that turns the JSON events of a Chrome trace (json_stream.h) into a
// KinetoTrace, one trace event at a time: each event's fields go into a scratch record that
// is kept (GPU activities, runtime calls, ProfilerStep annotations, memory samples) or
// dropped when the event ends; every other value is skipped. Only distributedInfo and
// deviceProperties, which are small, are built as JSON values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "measured/byte_source.h"
#include "measured/kineto_trace.h"

namespace tessera::measured {

class KinetoSax {
 public:
  using json = nlohmann::json;
  explicit KinetoSax(KinetoTrace& out) : out_(out) {}

  // Parses all of `source` into the trace. Throws base::InputError on bytes that are not
  // JSON (naming the byte offset) or on a read error.
  void run(ByteSource& source);

  [[nodiscard]] bool saw_trace_events() const { return saw_events_; }
  [[nodiscard]] const json& distributed_info() const { return dist_; }
  [[nodiscard]] const json& device_properties() const { return devices_; }

  // JSON events (json_stream.h's handler interface).
  void start_object() { open(true); }
  void end_object() { close(); }
  void start_array() { open(false); }
  void end_array() { close(); }
  void key(std::string_view k);
  void string(std::string_view v);
  void integer(std::int64_t v) { scalar(static_cast<double>(v), v); }
  void unsigned_integer(std::uint64_t v) {
    scalar(static_cast<double>(v),
           v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v));
  }
  void floating(double v);
  void boolean(bool v);
  void null();

 private:
  // Which field of the current event (or of its args) the next value belongs to.
  enum class Field : unsigned char {
    kNone,
    kArgs,
    kCat,
    kName,
    kTid,
    kTs,
    kDur,
    kStream,
    kCorrelation,
    kDevice,
    kBytes,
    kInNelems,
    kOutNelems,
    kGroupSize,
    kDtype,
    kPgName,
    kPgRanks,
    kCollName,
    kTotalAllocated,
    kDeviceType,
    kDeviceId,
  };
  // The root object's member being read.
  enum class TopKey : unsigned char { kOther, kTraceEvents, kDistributedInfo, kDeviceProperties };
  struct Event {
    std::string cat, name, dtype, pg_name, pg_ranks, coll_name;
    std::int64_t ts_ns = -1, dur_ns = 0;  // exact for integer microseconds
    std::int64_t tid = 0, stream = -1, correlation = -1, device = -1, bytes = -1;
    std::int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
    std::int64_t total_allocated = -1, device_type = -1, device_id = -1;
    void clear();
  };
  // Builds one small subtree (distributedInfo, deviceProperties) as a JSON value.
  struct Capture {
    json* target = nullptr;  // non-null while capturing
    std::vector<json*> stack;
    std::string key;
    void value(json v);
    void open(bool object);
    void close();
  };

  static Field event_field(std::string_view k);
  static Field arg_field(std::string_view k);
  void open(bool object);
  void close();
  void scalar(double d, std::int64_t i);  // a number value
  void finish_event();

  KinetoTrace& out_;
  std::string path_;                // of the source, for errors
  std::int64_t depth_ = 0;          // open containers
  std::int64_t events_depth_ = -1;  // depth of the traceEvents array
  std::int64_t skip_depth_ = -1;    // >= 0: inside a value nobody reads, opened at this depth
  bool saw_events_ = false;
  bool root_is_array_ = false;
  TopKey top_ = TopKey::kOther;
  Field field_ = Field::kNone;
  bool in_args_ = false;
  Event ev_;
  std::vector<signed char> category_cache_;  // by interned name, -1 unknown
  Capture capture_;
  json dist_;
  json devices_;
};

}  // namespace tessera::measured
