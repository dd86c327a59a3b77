// SPDX-License-Identifier: Apache-2.0
// Element types of tensors and the compute rates a profile lists per type.
#pragma once

#include <string_view>

namespace tessera::base {

enum class DType : unsigned char { kBF16, kFP16, kFP32, kFP8 };
constexpr int kNumDTypes = 4;

constexpr int dtype_bytes(DType d) {
  switch (d) {
    case DType::kBF16:
      return 2;
    case DType::kFP16:
      return 2;
    case DType::kFP32:
      return 4;
    case DType::kFP8:
      return 1;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::kBF16:
      return "bf16";
    case DType::kFP16:
      return "fp16";
    case DType::kFP32:
      return "fp32";
    case DType::kFP8:
      return "fp8";
  }
  return "?";
}

}  // namespace tessera::base
