// SPDX-License-Identifier: Apache-2.0
#include "measured/kineto_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "base/error.h"
#include "measured/byte_source.h"
#include "measured/kineto_sax.h"

namespace tessera::measured {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& message,
                       const std::string& hint = "") {
  throw base::InputError(base::SourceLoc{path}, message, hint);
}

// An integer of type T, or nothing when `v` is not a number with an integer value that T
// can hold (metadata out of range reads as absent rather than wrapped or undefined).
template <typename T>
std::optional<T> checked_int(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
               ? std::optional<T>(static_cast<T>(u))
               : std::nullopt;
  }
  if (v.is_number_integer()) {
    auto i = v.get<std::int64_t>();
    return i >= std::numeric_limits<T>::min() && i <= std::numeric_limits<T>::max()
               ? std::optional<T>(static_cast<T>(i))
               : std::nullopt;
  }
  if (v.is_number_float()) {
    auto d = v.get<double>();
    // The bounds are exact doubles for int32; for int64, 2^63 itself is excluded.
    if (d == std::floor(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
        d < -static_cast<double>(std::numeric_limits<T>::min())) {
      return static_cast<T>(d);
    }
  }
  return std::nullopt;
}

std::vector<std::int32_t> int_list(const nlohmann::json& j) {
  std::vector<std::int32_t> out;
  if (j.is_array()) {
    for (const auto& v : j) {
      if (auto i = checked_int<std::int32_t>(v)) {
        out.push_back(*i);
      }
    }
  }
  return out;
}

template <typename T>
T get_or(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object()) {
    return fallback;
  }
  auto it = j.find(key);
  if (it == j.end()) {
    return fallback;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else {
    return checked_int<T>(*it).value_or(fallback);
  }
}

void read_distributed(const nlohmann::json& d, DistributedInfo& out) {
  out.backend = get_or<std::string>(d, "backend", "");
  out.rank = get_or<std::int32_t>(d, "rank", -1);
  out.world_size = get_or<std::int32_t>(d, "world_size", -1);
  out.nccl_version = get_or<std::string>(d, "nccl_version", "");
  if (d.is_object() && d.contains("pg_config") && d["pg_config"].is_array()) {
    for (const auto& pg : d["pg_config"]) {
      ProcessGroup g;
      g.name = get_or<std::string>(pg, "pg_name", "");
      g.desc = get_or<std::string>(pg, "pg_desc", "");
      g.size = get_or<std::int32_t>(pg, "pg_size", -1);
      if (pg.is_object() && pg.contains("ranks")) {
        g.ranks = int_list(pg["ranks"]);
      }
      out.groups.push_back(std::move(g));
    }
  }
}

KinetoTrace read(ByteSource& source) {
  const std::string& path = source.path();
  KinetoTrace t;
  t.path = path;
  KinetoSax sax(t);
  sax.run(source);
  t.json_bytes = source.bytes_out();
  if (!sax.saw_trace_events()) {
    fail(path, "not a Chrome trace: the JSON has no traceEvents array",
         "expected a trace written by torch.profiler (Kineto)");
  }
  if (t.gpu.empty()) {
    fail(path, "the trace has no GPU activity (no kernel, gpu_memcpy or gpu_memset events)",
         "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
  }
  read_distributed(sax.distributed_info(), t.dist);
  const auto& devs = sax.device_properties();
  if (devs.is_array() && !devs.empty()) {
    t.device_name = get_or<std::string>(devs[0], "name", "");
    t.device_memory = get_or<std::int64_t>(devs[0], "totalGlobalMem", -1);
  }
  std::sort(t.steps.begin(), t.steps.end(),
            [](const StepAnnotation& a, const StepAnnotation& b) { return a.ts_ns < b.ts_ns; });
  return t;
}

}  // namespace

KinetoTrace read_kineto(const std::string& path) {
  ByteSource source(path);
  return read(source);
}

KinetoTrace read_kineto_bytes(std::string_view bytes, const std::string& name) {
  ByteSource source(bytes, name);
  return read(source);
}

}  // namespace tessera::measured
