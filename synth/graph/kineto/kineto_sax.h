// SPDX-License-Identifier: Apache-2.0
// The SAX handler that turns a Chrome-trace JSON stream into a KinetoTrace, one trace event
// at a time: each event's fields go into a scratch record that is kept (GPU activities,
// runtime calls, ProfilerStep annotations, memory samples) or dropped when the event ends.
// Only distributedInfo and deviceProperties, which are small, are built as JSON values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "synth/graph/kineto/kineto_trace.h"

namespace tessera::graph::kineto {

class KinetoSax {
 public:
  using json = nlohmann::json;
  explicit KinetoSax(KinetoTrace& out) : out_(out) {}

  bool null();
  bool boolean(bool v);
  bool number_integer(json::number_integer_t v);
  bool number_unsigned(json::number_unsigned_t v);
  bool number_float(json::number_float_t v, const std::string& text);
  bool string(std::string& v);
  bool binary(json::binary_t& v);
  bool start_object(std::size_t size);
  bool key(std::string& k);
  bool end_object();
  bool start_array(std::size_t size);
  bool end_array();
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex);

  [[nodiscard]] bool saw_trace_events() const { return saw_events_; }
  [[nodiscard]] const json& distributed_info() const { return dist_; }
  [[nodiscard]] const json& device_properties() const { return devices_; }

 private:
  // Which field of the current event (or of its args) the next value belongs to.
  enum class Field : unsigned char {
    kNone,
    kPh,
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
  struct Event {
    std::string ph, cat, name, dtype, pg_name, pg_ranks, coll_name;
    std::int64_t ts_ns = -1, dur_ns = 0;  // exact for integer microseconds
    std::int64_t tid = 0, stream = -1, correlation = -1, device = -1, bytes = -1;
    std::int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
    std::int64_t total_allocated = -1, device_type = -1, device_id = -1;
    void clear();
  };

  bool scalar(double d, std::int64_t i);  // a number value
  void finish_event();
  // Building the small subtrees (distributedInfo, deviceProperties) as JSON values.
  bool sub_value(json v);

  KinetoTrace& out_;
  int depth_ = 0;
  int events_depth_ = -1;  // depth of the traceEvents array
  int skip_depth_ = -1;    // >= 0: inside a value nobody reads, opened at this depth
  bool saw_events_ = false;
  bool root_is_array_ = false;
  std::string top_key_;  // the root object's key being read
  Field field_ = Field::kNone;
  bool in_args_ = false;
  Event ev_;
  std::vector<signed char> category_cache_;  // by interned name, -1 unknown
  // Subtree capture.
  json* sub_target_ = nullptr;
  std::vector<json*> sub_stack_;
  std::string sub_key_;
  json dist_;
  json devices_;
};

}  // namespace tessera::graph::kineto
