// SPDX-License-Identifier: Apache-2.0
#include "measured/kernel_class.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace tessera::measured {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

template <std::size_t N>
bool contains_any(const std::string& s, const std::array<std::string_view, N>& needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&s](std::string_view n) { return s.find(n) != std::string::npos; });
}

}  // namespace

std::optional<CommType> nccl_comm_type(std::string_view name) {
  std::string n = lower(name);
  if (n.rfind("nccl", 0) != 0) {
    return std::nullopt;
  }
  // The operation follows the first underscore: ncclKernel_AllReduce_..., ncclDevKernel_SendRecv.
  std::size_t us = n.find('_');
  std::string op = us == std::string::npos ? n : n.substr(us + 1);
  struct Entry {
    std::string_view prefix;
    CommType type;
  };
  static constexpr std::array<Entry, 9> kOps = {{{"allreduce", CommType::kAllReduce},
                                                 {"allgather", CommType::kAllGather},
                                                 {"reducescatter", CommType::kReduceScatter},
                                                 {"broadcast", CommType::kBroadcast},
                                                 {"alltoall", CommType::kAllToAll},
                                                 {"sendrecv", CommType::kSendRecv},
                                                 {"send", CommType::kSendRecv},
                                                 {"recv", CommType::kSendRecv},
                                                 {"reduce", CommType::kReduce}}};
  for (const Entry& e : kOps) {
    if (op.rfind(e.prefix, 0) == 0) {
      return e.type;
    }
  }
  return CommType::kOther;
}

std::optional<CommType> collective_name_type(std::string_view name) {
  std::string n = lower(name);
  n.erase(std::remove(n.begin(), n.end(), '_'), n.end());
  struct Entry {
    std::string_view needle;
    CommType type;
  };
  static constexpr std::array<Entry, 9> kOps = {{{"allreduce", CommType::kAllReduce},
                                                 {"allgather", CommType::kAllGather},
                                                 {"reducescatter", CommType::kReduceScatter},
                                                 {"broadcast", CommType::kBroadcast},
                                                 {"alltoall", CommType::kAllToAll},
                                                 {"send", CommType::kSendRecv},
                                                 {"recv", CommType::kSendRecv},
                                                 {"gather", CommType::kOther},
                                                 {"reduce", CommType::kReduce}}};
  for (const Entry& e : kOps) {
    if (n.find(e.needle) != std::string::npos) {
      return e.type;
    }
  }
  return std::nullopt;
}

Category classify_kernel(std::string_view name) {
  if (nccl_comm_type(name)) {
    return Category::kComm;
  }
  std::string n = lower(name);
  static constexpr std::array<std::string_view, 3> kAttention = {"flash", "fmha", "attention"};
  static constexpr std::array<std::string_view, 9> kGemm = {
      "gemm", "cutlass", "cublas", "xmma", "gemv", "s1688", "h1688", "s16816", "h16816"};
  static constexpr std::array<std::string_view, 10> kNorm = {
      "layer_norm", "layernorm",  "rms_norm",  "rmsnorm", "batch_norm",
      "batchnorm",  "group_norm", "groupnorm", "bn_fw_",  "bn_bw_"};
  static constexpr std::array<std::string_view, 2> kOptimizer = {"adam", "sgd"};
  if (contains_any(n, kAttention)) {
    return Category::kAttention;
  }
  if (contains_any(n, kGemm)) {
    return Category::kGemm;
  }
  if (contains_any(n, kNorm) || n.find("gammabetabackward") != std::string::npos) {
    return Category::kNorm;
  }
  if (contains_any(n, kOptimizer)) {
    return Category::kOptimizer;
  }
  return Category::kElementwise;
}

}  // namespace tessera::measured
