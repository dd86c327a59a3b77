// SPDX-License-Identifier: Apache-2.0
#include "measured/kineto_trace.h"

#include <algorithm>
#include <array>

namespace tessera::measured {

std::string_view category_name(Category c) {
  static constexpr std::array<std::string_view, kNumCategories> kNames = {
      "gemm", "attention", "norm", "optimizer", "elementwise/other", "memcpy", "memset", "nccl"};
  return kNames[static_cast<std::size_t>(c)];
}

std::string_view comm_type_name(CommType t) {
  static constexpr std::array<std::string_view, kNumCommTypes> kNames = {
      "all-reduce", "all-gather", "reduce-scatter", "broadcast",
      "reduce",     "all-to-all", "send/recv",      "other"};
  return kNames[static_cast<std::size_t>(t)];
}

int dtype_size(std::string_view d) {
  struct Entry {
    std::string_view name;
    int bytes;
  };
  static constexpr std::array<Entry, 14> kSizes = {{{"Float", 4},
                                                    {"float", 4},
                                                    {"Double", 8},
                                                    {"BFloat16", 2},
                                                    {"Half", 2},
                                                    {"Int", 4},
                                                    {"Long", 8},
                                                    {"Char", 1},
                                                    {"Byte", 1},
                                                    {"Bool", 1},
                                                    {"Short", 2},
                                                    {"Float8_e4m3fn", 1},
                                                    {"Float8_e5m2", 1},
                                                    {"int8", 1}}};
  for (const Entry& e : kSizes) {
    if (e.name == d) {
      return e.bytes;
    }
  }
  return 0;
}

std::int64_t CommArgs::bytes() const {
  int size = dtype_size(dtype);
  std::int64_t n = std::max(in_nelems, out_nelems);
  if (size == 0 || n < 0) {
    return -1;
  }
  return n * size;
}

std::uint32_t KinetoTrace::intern(std::string_view name) {
  auto it = name_index.find(name);
  if (it != name_index.end()) {
    return it->second;
  }
  auto id = static_cast<std::uint32_t>(names.size());
  names.emplace_back(name);
  name_index.emplace(names.back(), id);
  return id;
}

std::int64_t KinetoTrace::peak_allocated() const {
  std::int64_t peak = -1;
  for (const MemorySample& m : memory) {
    if (m.device_type == 1) {
      peak = std::max(peak, m.total_allocated);
    }
  }
  return peak;
}

}  // namespace tessera::measured
