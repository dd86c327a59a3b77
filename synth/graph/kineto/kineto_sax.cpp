// SPDX-License-Identifier: Apache-2.0
#include "synth/graph/kineto/kineto_sax.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "sim/base/error.h"
#include "synth/graph/kineto/kernel_class.h"

namespace tessera::graph::kineto {

namespace {

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
  ph.clear();
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

bool KinetoSax::sub_value(json v) {
  if (sub_stack_.empty()) {
    return true;
  }
  json& top = *sub_stack_.back();
  if (top.is_array()) {
    top.push_back(std::move(v));
  } else {
    top[sub_key_] = std::move(v);
  }
  return true;
}

bool KinetoSax::scalar(double d, std::int64_t i) {
  if (skip_depth_ >= 0) {
    return true;
  }
  if (sub_target_ != nullptr) {
    return sub_value(i == INT64_MIN ? json(d) : json(i));
  }
  auto as_int = [&]() { return i == INT64_MIN ? static_cast<std::int64_t>(d) : i; };
  // Microseconds to nanoseconds; integers stay exact (epoch microseconds exceed a double's
  // integer range once multiplied by 1000).
  auto ns = [&]() {
    if (i != INT64_MIN && i > -9'000'000'000'000'000 && i < 9'000'000'000'000'000) {
      return i * 1000;
    }
    return std::isfinite(d) && std::fabs(d) < 9e15 ? to_ns(d) : 0;
  };
  switch (field_) {
    case Field::kTs:
      ev_.ts_ns = ns();
      break;
    case Field::kDur:
      ev_.dur_ns = ns();
      break;
    case Field::kTid:
      ev_.tid = as_int();
      break;
    case Field::kStream:
      ev_.stream = as_int();
      break;
    case Field::kCorrelation:
      ev_.correlation = as_int();
      break;
    case Field::kDevice:
      ev_.device = as_int();
      break;
    case Field::kBytes:
      ev_.bytes = as_int();
      break;
    case Field::kInNelems:
      ev_.in_nelems = as_int();
      break;
    case Field::kOutNelems:
      ev_.out_nelems = as_int();
      break;
    case Field::kGroupSize:
      ev_.group_size = as_int();
      break;
    case Field::kTotalAllocated:
      ev_.total_allocated = as_int();
      break;
    case Field::kDeviceType:
      ev_.device_type = as_int();
      break;
    case Field::kDeviceId:
      ev_.device_id = as_int();
      break;
    default:
      break;
  }
  field_ = Field::kNone;
  return true;
}

bool KinetoSax::null() {
  if (sub_target_ != nullptr && skip_depth_ < 0) {
    return sub_value(nullptr);
  }
  field_ = Field::kNone;
  return true;
}

bool KinetoSax::boolean(bool v) {
  if (sub_target_ != nullptr && skip_depth_ < 0) {
    return sub_value(v);
  }
  field_ = Field::kNone;
  return true;
}

bool KinetoSax::number_integer(json::number_integer_t v) {
  return scalar(static_cast<double>(v), v);
}

bool KinetoSax::number_unsigned(json::number_unsigned_t v) {
  auto i = v > static_cast<json::number_unsigned_t>(INT64_MAX) ? INT64_MAX
                                                               : static_cast<std::int64_t>(v);
  return scalar(static_cast<double>(v), i);
}

bool KinetoSax::number_float(json::number_float_t v, const std::string& /*text*/) {
  return scalar(v, std::isfinite(v) && std::fabs(v) < 9e18 ? INT64_MIN : 0);
}

bool KinetoSax::binary(json::binary_t& /*v*/) {
  return true;
}

bool KinetoSax::string(std::string& v) {
  if (skip_depth_ >= 0) {
    return true;
  }
  if (sub_target_ != nullptr) {
    return sub_value(std::move(v));
  }
  switch (field_) {
    case Field::kPh:
      ev_.ph.swap(v);
      break;
    case Field::kCat:
      ev_.cat.swap(v);
      break;
    case Field::kName:
      ev_.name.swap(v);
      break;
    case Field::kDtype:
      ev_.dtype.swap(v);
      break;
    case Field::kPgName:
      ev_.pg_name.swap(v);
      break;
    case Field::kPgRanks:
      ev_.pg_ranks.swap(v);
      break;
    case Field::kCollName:
      ev_.coll_name.swap(v);
      break;
    default:
      break;
  }
  field_ = Field::kNone;
  return true;
}

bool KinetoSax::start_object(std::size_t /*size*/) {
  ++depth_;
  if (skip_depth_ >= 0) {
    return true;
  }
  if (sub_target_ != nullptr) {
    if (sub_stack_.empty()) {
      *sub_target_ = json::object();
      sub_stack_.push_back(sub_target_);
    } else {
      json& top = *sub_stack_.back();
      json* child =
          top.is_array() ? &top.emplace_back(json::object()) : &(top[sub_key_] = json::object());
      sub_stack_.push_back(child);
    }
    return true;
  }
  if (depth_ == 1) {
    return true;  // the root object
  }
  if (events_depth_ >= 0 && depth_ == events_depth_ + 1) {
    ev_.clear();
    field_ = Field::kNone;
    in_args_ = false;
    return true;
  }
  if (events_depth_ >= 0 && depth_ == events_depth_ + 2 && field_ == Field::kNone && in_args_) {
    return true;  // the args object (key() set in_args_)
  }
  skip_depth_ = depth_;
  return true;
}

bool KinetoSax::end_object() {
  if (skip_depth_ >= 0) {
    if (depth_ == skip_depth_) {
      skip_depth_ = -1;
      field_ = Field::kNone;
    }
    --depth_;
    return true;
  }
  if (sub_target_ != nullptr) {
    sub_stack_.pop_back();
    if (sub_stack_.empty()) {
      sub_target_ = nullptr;
    }
    --depth_;
    return true;
  }
  if (events_depth_ >= 0 && depth_ == events_depth_ + 1) {
    finish_event();
  } else if (events_depth_ >= 0 && depth_ == events_depth_ + 2) {
    in_args_ = false;
  }
  field_ = Field::kNone;
  --depth_;
  return true;
}

bool KinetoSax::start_array(std::size_t /*size*/) {
  ++depth_;
  if (skip_depth_ >= 0) {
    return true;
  }
  if (sub_target_ != nullptr) {
    if (sub_stack_.empty()) {
      *sub_target_ = json::array();
      sub_stack_.push_back(sub_target_);
    } else {
      json& top = *sub_stack_.back();
      json* child =
          top.is_array() ? &top.emplace_back(json::array()) : &(top[sub_key_] = json::array());
      sub_stack_.push_back(child);
    }
    return true;
  }
  if (depth_ == 1) {  // the JSON Array Format: the root is the event list
    root_is_array_ = true;
    events_depth_ = 1;
    saw_events_ = true;
    return true;
  }
  if (depth_ == 2 && !root_is_array_ && top_key_ == "traceEvents") {
    events_depth_ = 2;
    saw_events_ = true;
    return true;
  }
  skip_depth_ = depth_;
  return true;
}

bool KinetoSax::end_array() {
  if (skip_depth_ >= 0) {
    if (depth_ == skip_depth_) {
      skip_depth_ = -1;
      field_ = Field::kNone;
    }
    --depth_;
    return true;
  }
  if (sub_target_ != nullptr) {
    sub_stack_.pop_back();
    if (sub_stack_.empty()) {
      sub_target_ = nullptr;
    }
    --depth_;
    return true;
  }
  if (depth_ == events_depth_) {
    events_depth_ = -1;
  }
  --depth_;
  return true;
}

bool KinetoSax::key(std::string& k) {
  if (skip_depth_ >= 0) {
    return true;
  }
  if (sub_target_ != nullptr) {
    sub_key_.swap(k);
    return true;
  }
  if (depth_ == 1 && !root_is_array_) {
    top_key_ = k;
    if (k == "distributedInfo") {
      sub_target_ = &dist_;
    } else if (k == "deviceProperties") {
      sub_target_ = &devices_;
    }
    return true;
  }
  field_ = Field::kNone;
  if (events_depth_ < 0) {
    return true;
  }
  if (depth_ == events_depth_ + 1) {
    if (k == "ph") {
      field_ = Field::kPh;
    } else if (k == "cat") {
      field_ = Field::kCat;
    } else if (k == "name") {
      field_ = Field::kName;
    } else if (k == "tid") {
      field_ = Field::kTid;
    } else if (k == "ts") {
      field_ = Field::kTs;
    } else if (k == "dur") {
      field_ = Field::kDur;
    } else if (k == "args") {
      in_args_ = true;
    }
    return true;
  }
  if (depth_ == events_depth_ + 2 && in_args_) {
    struct Entry {
      std::string_view key;
      Field field;
    };
    static constexpr Entry kArgs[] = {{"stream", Field::kStream},
                                      {"correlation", Field::kCorrelation},
                                      {"device", Field::kDevice},
                                      {"bytes", Field::kBytes},
                                      {"In msg nelems", Field::kInNelems},
                                      {"Out msg nelems", Field::kOutNelems},
                                      {"Group size", Field::kGroupSize},
                                      {"dtype", Field::kDtype},
                                      {"Process Group Name", Field::kPgName},
                                      {"Process Group Ranks", Field::kPgRanks},
                                      {"Collective name", Field::kCollName},
                                      {"Total Allocated", Field::kTotalAllocated},
                                      {"Device Type", Field::kDeviceType},
                                      {"Device Id", Field::kDeviceId}};
    for (const Entry& e : kArgs) {
      if (e.key == k) {
        field_ = e.field;
        break;
      }
    }
  }
  return true;
}

bool KinetoSax::parse_error(std::size_t position, const std::string& /*last_token*/,
                            const nlohmann::detail::exception& ex) {
  std::string what = ex.what();
  // nlohmann's text starts with "[json.exception.parse_error.101] parse error at ...".
  if (auto at = what.find("] "); at != std::string::npos) {
    what = what.substr(at + 2);
  }
  throw base::InputError(base::SourceLoc{out_.path},
                         fmt::format("not valid JSON (byte {}): {}", position, what),
                         "expected a Chrome-trace JSON file from torch.profiler (Kineto), "
                         "plain or gzip-compressed");
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

}  // namespace tessera::graph::kineto
