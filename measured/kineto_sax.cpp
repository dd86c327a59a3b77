// SPDX-License-Identifier: Apache-2.0
#include "measured/kineto_sax.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "base/error.h"
#include "measured/json_stream.h"
#include "measured/kernel_class.h"

namespace tessera::measured {

namespace {

// The ranges a trace's numbers must lie in; beyond them the value is corrupt, and reading
// it on would overflow the nanosecond (and the simulator's picosecond) clocks.
constexpr double kMaxTsUs = 4e15;   // year 2096 in epoch microseconds; ts + dur fits in ns
constexpr double kMaxDurUs = 1e12;  // 11.6 days
constexpr double kMaxSize = 1e15;   // bytes or elements of one event (a petabyte)
constexpr double kMaxSmallInt = 2147483647.0;  // device ids, group sizes (int32 fields)
constexpr double kAnyInt = 9e18;               // ids: any int64 written as an integer

std::int64_t to_ns(double us) {
  return std::llround(us * 1000.0);
}

std::vector<std::int32_t> parse_rank_list(std::string_view s) {
  std::vector<std::int32_t> ranks;
  std::int64_t v = 0;
  bool in_number = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      in_number = true;
      if (v > 1'000'000'000) {
        return {};
      }
    } else if (in_number) {
      ranks.push_back(static_cast<std::int32_t>(v));
      v = 0;
      in_number = false;
    }
  }
  if (in_number) {
    ranks.push_back(static_cast<std::int32_t>(v));
  }
  return ranks;
}

}  // namespace

void KinetoSax::Event::clear() {
  cat.clear();
  name.clear();
  dtype.clear();
  pg_name.clear();
  pg_ranks.clear();
  coll_name.clear();
  ts_ns = -1;
  dur_ns = 0;
  tid = 0;
  stream = correlation = device = bytes = -1;
  in_nelems = out_nelems = group_size = -1;
  total_allocated = device_type = device_id = -1;
}

void KinetoSax::Capture::value(json v) {
  json& top = *stack.back();
  if (top.is_array()) {
    top.push_back(std::move(v));
  } else {
    top[key] = std::move(v);
  }
}

void KinetoSax::Capture::open(bool object) {
  json v = object ? json::object() : json::array();
  json* child = nullptr;
  if (stack.empty()) {
    *target = std::move(v);
    child = target;
  } else if (json& top = *stack.back(); top.is_array()) {
    child = &top.emplace_back(std::move(v));
  } else {
    child = &(top[key] = std::move(v));
  }
  stack.push_back(child);
}

void KinetoSax::Capture::close() {
  stack.pop_back();
  if (stack.empty()) {
    target = nullptr;
  }
}

KinetoSax::Field KinetoSax::event_field(std::string_view k) {
  switch (k.size()) {
    case 2:
      return k == "ts" ? Field::kTs : Field::kNone;
    case 3:
      if (k == "cat") {
        return Field::kCat;
      }
      if (k == "dur") {
        return Field::kDur;
      }
      return k == "tid" ? Field::kTid : Field::kNone;
    case 4:
      if (k == "name") {
        return Field::kName;
      }
      return k == "args" ? Field::kArgs : Field::kNone;
    default:
      return Field::kNone;
  }
}

KinetoSax::Field KinetoSax::arg_field(std::string_view k) {
  auto is = [&](std::string_view name, Field f) { return k == name ? f : Field::kNone; };
  switch (k.size()) {
    case 5:
      return k[0] == 'b' ? is("bytes", Field::kBytes) : is("dtype", Field::kDtype);
    case 6:
      return k[0] == 's' ? is("stream", Field::kStream) : is("device", Field::kDevice);
    case 9:
      return is("Device Id", Field::kDeviceId);
    case 10:
      return is("Group size", Field::kGroupSize);
    case 11:
      return k[0] == 'c' ? is("correlation", Field::kCorrelation)
                         : is("Device Type", Field::kDeviceType);
    case 13:
      return is("In msg nelems", Field::kInNelems);
    case 14:
      return is("Out msg nelems", Field::kOutNelems);
    case 15:
      return k[0] == 'C' ? is("Collective name", Field::kCollName)
                         : is("Total Allocated", Field::kTotalAllocated);
    case 18:
      return is("Process Group Name", Field::kPgName);
    case 19:
      return is("Process Group Ranks", Field::kPgRanks);
    default:
      return Field::kNone;
  }
}

void KinetoSax::open(bool object) {
  ++depth_;
  if (skip_depth_ >= 0) {
    return;
  }
  if (capture_.target != nullptr) {
    capture_.open(object);
    return;
  }
  if (depth_ == 1) {
    if (!object) {  // the JSON Array Format: the root is the event list
      root_is_array_ = true;
      events_depth_ = 1;
      saw_events_ = true;
    }
    return;
  }
  if (depth_ == 2 && !root_is_array_) {  // the value of one of the root object's members
    if (top_ == TopKey::kTraceEvents && !object) {
      events_depth_ = 2;
      saw_events_ = true;
      return;
    }
    if (top_ == TopKey::kDistributedInfo || top_ == TopKey::kDeviceProperties) {
      capture_.target = top_ == TopKey::kDistributedInfo ? &dist_ : &devices_;
      capture_.open(object);
      return;
    }
  } else if (events_depth_ >= 0 && object) {
    if (depth_ == events_depth_ + 1) {  // an event
      ev_.clear();
      field_ = Field::kNone;
      in_args_ = false;
      return;
    }
    if (depth_ == events_depth_ + 2 && field_ == Field::kArgs) {
      in_args_ = true;
      field_ = Field::kNone;
      return;
    }
  }
  skip_depth_ = depth_;
  field_ = Field::kNone;
}

void KinetoSax::close() {
  if (skip_depth_ >= 0) {
    if (depth_ == skip_depth_) {
      skip_depth_ = -1;
    }
    --depth_;
    return;
  }
  if (capture_.target != nullptr) {
    capture_.close();
    --depth_;
    return;
  }
  if (events_depth_ >= 0) {
    if (depth_ == events_depth_) {
      events_depth_ = -1;  // the end of traceEvents
    } else if (depth_ == events_depth_ + 1) {
      finish_event();
    } else if (depth_ == events_depth_ + 2) {
      in_args_ = false;
    }
  }
  field_ = Field::kNone;
  --depth_;
}

void KinetoSax::key(std::string_view k) {
  if (skip_depth_ >= 0) {
    return;
  }
  if (capture_.target != nullptr) {
    capture_.key.assign(k);
    return;
  }
  if (depth_ == 1) {
    if (k == "traceEvents") {
      top_ = TopKey::kTraceEvents;
    } else if (k == "distributedInfo") {
      top_ = TopKey::kDistributedInfo;
    } else if (k == "deviceProperties") {
      top_ = TopKey::kDeviceProperties;
    } else {
      top_ = TopKey::kOther;
    }
    return;
  }
  if (events_depth_ < 0) {
    return;
  }
  if (depth_ == events_depth_ + 1) {
    field_ = event_field(k);
  } else if (depth_ == events_depth_ + 2 && in_args_) {
    field_ = arg_field(k);
  }
}

void KinetoSax::scalar(double d, std::int64_t i) {
  if (skip_depth_ >= 0) {
    return;
  }
  if (capture_.target != nullptr) {
    capture_.value(i == INT64_MIN ? json(d) : json(i));
    return;
  }
  // i == INT64_MIN: the value was written as a float, use d.
  const double v = i == INT64_MIN ? d : static_cast<double>(i);
  auto out_of_range = [&](std::string_view field, double limit) {
    throw base::InputError(
        base::SourceLoc{path_},
        fmt::format("trace event {}: '{}' is {}, out of range (|value| must be at most {})",
                    out_.events + 1, field, v, limit),
        "a value this large is corrupt; the timestamps of a Kineto trace are microseconds");
  };
  auto as_int = [&](std::string_view field, double limit) -> std::int64_t {
    if (i != INT64_MIN && limit >= kAnyInt) {
      return i;
    }
    if (!(std::fabs(v) <= limit)) {
      out_of_range(field, limit);
    }
    return i != INT64_MIN ? i : static_cast<std::int64_t>(d);
  };
  // Microseconds to nanoseconds; integers stay exact (epoch microseconds exceed a double's
  // integer range once multiplied by 1000).
  auto ns = [&](std::string_view field, double limit_us) -> std::int64_t {
    if (!(std::fabs(v) <= limit_us)) {
      out_of_range(field, limit_us);
    }
    return i != INT64_MIN ? i * 1000 : to_ns(d);
  };
  switch (field_) {
    case Field::kTs:
      ev_.ts_ns = ns("ts", kMaxTsUs);
      break;
    case Field::kDur:
      ev_.dur_ns = ns("dur", kMaxDurUs);
      break;
    case Field::kTid:
      ev_.tid = as_int("tid", kAnyInt);
      break;
    case Field::kStream:
      ev_.stream = as_int("stream", kAnyInt);
      break;
    case Field::kCorrelation:
      ev_.correlation = as_int("correlation", kAnyInt);
      break;
    case Field::kDevice:
      ev_.device = as_int("device", kMaxSmallInt);
      break;
    case Field::kBytes:
      ev_.bytes = as_int("bytes", kMaxSize);
      break;
    case Field::kInNelems:
      ev_.in_nelems = as_int("In msg nelems", kMaxSize);
      break;
    case Field::kOutNelems:
      ev_.out_nelems = as_int("Out msg nelems", kMaxSize);
      break;
    case Field::kGroupSize:
      ev_.group_size = as_int("Group size", kMaxSmallInt);
      break;
    case Field::kTotalAllocated:
      ev_.total_allocated = as_int("Total Allocated", kMaxSize);
      break;
    case Field::kDeviceType:
      ev_.device_type = as_int("Device Type", kMaxSmallInt);
      break;
    case Field::kDeviceId:
      ev_.device_id = as_int("Device Id", kMaxSmallInt);
      break;
    default:
      break;
  }
  field_ = Field::kNone;
}

void KinetoSax::floating(double v) {
  scalar(v, INT64_MIN);  // INT64_MIN marks "use the double"
}

void KinetoSax::null() {
  if (skip_depth_ < 0 && capture_.target != nullptr) {
    capture_.value(nullptr);
    return;
  }
  field_ = Field::kNone;
}

void KinetoSax::boolean(bool v) {
  if (skip_depth_ < 0 && capture_.target != nullptr) {
    capture_.value(v);
    return;
  }
  field_ = Field::kNone;
}

void KinetoSax::string(std::string_view v) {
  if (skip_depth_ >= 0) {
    return;
  }
  if (capture_.target != nullptr) {
    capture_.value(std::string(v));
    return;
  }
  switch (field_) {
    case Field::kCat:
      ev_.cat.assign(v);
      break;
    case Field::kName:
      ev_.name.assign(v);
      break;
    case Field::kDtype:
      ev_.dtype.assign(v);
      break;
    case Field::kPgName:
      ev_.pg_name.assign(v);
      break;
    case Field::kPgRanks:
      ev_.pg_ranks.assign(v);
      break;
    case Field::kCollName:
      ev_.coll_name.assign(v);
      break;
    default:
      break;
  }
  field_ = Field::kNone;
}

void KinetoSax::run(ByteSource& source) {
  path_ = source.path();
  JsonStream stream(source,
                    "expected a Chrome-trace JSON file from torch.profiler (Kineto), plain or "
                    "gzip-compressed");
  stream.parse(*this);
}

void KinetoSax::finish_event() {
  ++out_.events;
  const std::string& cat = ev_.cat;
  if (ev_.ts_ns < 0 && ev_.name != "[memory]") {
    return;
  }
  bool kernel = cat == "kernel" || cat == "Kernel";
  bool memcpy = cat == "gpu_memcpy" || cat == "Memcpy";
  bool memset = cat == "gpu_memset" || cat == "Memset";
  if (kernel || memcpy || memset) {
    GpuActivity a;
    a.ts_ns = ev_.ts_ns;
    a.dur_ns = std::max<std::int64_t>(0, ev_.dur_ns);
    a.stream = ev_.stream >= 0 ? ev_.stream : ev_.tid;
    a.correlation = ev_.correlation;
    a.bytes = ev_.bytes;
    a.device = static_cast<std::int32_t>(ev_.device);
    a.name = out_.intern(ev_.name);
    if (memcpy) {
      a.category = Category::kMemcpy;
    } else if (memset) {
      a.category = Category::kMemset;
    } else {
      if (category_cache_.size() <= a.name) {
        category_cache_.resize(a.name + 1, -1);
      }
      if (category_cache_[a.name] < 0) {
        category_cache_[a.name] = static_cast<signed char>(classify_kernel(ev_.name));
      }
      a.category = static_cast<Category>(category_cache_[a.name]);
    }
    if (a.category == Category::kComm) {
      CommArgs c;
      c.type = nccl_comm_type(ev_.name).value_or(CommType::kOther);
      if (!ev_.coll_name.empty()) {
        if (auto t = collective_name_type(ev_.coll_name); t && c.type == CommType::kOther) {
          c.type = *t;
        }
      }
      c.in_nelems = ev_.in_nelems;
      c.out_nelems = ev_.out_nelems;
      c.group_size = static_cast<std::int32_t>(ev_.group_size);
      c.dtype = ev_.dtype;
      c.pg_name = ev_.pg_name;
      c.pg_ranks = parse_rank_list(ev_.pg_ranks);
      a.comm = static_cast<std::int32_t>(out_.comms.size());
      out_.comms.push_back(std::move(c));
    }
    out_.gpu.push_back(a);
    return;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver") {
    RuntimeCall r;
    r.ts_ns = ev_.ts_ns;
    r.dur_ns = std::max<std::int64_t>(0, ev_.dur_ns);
    r.correlation = ev_.correlation;
    r.tid = ev_.tid;
    r.name = out_.intern(ev_.name);
    out_.runtime.push_back(r);
    return;
  }
  if (ev_.name.rfind("ProfilerStep#", 0) == 0 &&
      (cat == "user_annotation" || cat == "cpu_op" || cat == "python_function")) {
    StepAnnotation s;
    s.step = std::strtoll(ev_.name.c_str() + 13, nullptr, 10);
    s.ts_ns = ev_.ts_ns;
    s.dur_ns = std::max<std::int64_t>(0, ev_.dur_ns);
    out_.steps.push_back(s);
    return;
  }
  if (ev_.name == "[memory]" && ev_.total_allocated >= 0) {
    MemorySample m;
    m.ts_ns = std::max<std::int64_t>(0, ev_.ts_ns);
    m.total_allocated = ev_.total_allocated;
    m.device_type = static_cast<std::int32_t>(ev_.device_type);
    m.device_id = static_cast<std::int32_t>(ev_.device_id);
    out_.memory.push_back(m);
  }
}

}  // namespace tessera::measured
