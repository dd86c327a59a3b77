// SPDX-License-Identifier: Apache-2.0
// The tests' independent view of a Kineto trace: the whole JSON document (nlohmann DOM,
// gunzipped with zlib's gzread), and counts computed from it without the reader's code.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::kineto_test {

inline std::string testdata(const std::string& name) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/kineto/testdata/" + name;
}

inline const std::vector<std::string>& trace_names() {
  static const std::vector<std::string> kNames = {
      "a100-2rank-ddp-rank0.json.gz", "a100-8rank-rank3.json.gz", "a100-16rank-rank0.json.gz"};
  return kNames;
}

inline nlohmann::json load_dom(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw std::runtime_error("cannot open " + path);
  }
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  gzclose(f);
  return nlohmann::json::parse(text);
}

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

inline bool has(const std::string& s, const char* needle) {
  return s.find(needle) != std::string::npos;
}

// The expected category name (kineto::category_name) of a GPU event.
inline std::string oracle_category(const nlohmann::json& e) {
  std::string cat = e.value("cat", "");
  if (cat == "gpu_memcpy") {
    return "memcpy";
  }
  if (cat == "gpu_memset") {
    return "memset";
  }
  std::string n = lower(e.value("name", ""));
  if (n.rfind("nccl", 0) == 0) {
    return "nccl";
  }
  if (has(n, "flash") || has(n, "fmha") || has(n, "attention")) {
    return "attention";
  }
  for (const char* g :
       {"gemm", "cutlass", "cublas", "xmma", "gemv", "s1688", "h1688", "s16816", "h16816"}) {
    if (has(n, g)) {
      return "gemm";
    }
  }
  for (const char* g : {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm",
                        "group_norm", "groupnorm", "bn_fw_", "bn_bw_", "gammabetabackward"}) {
    if (has(n, g)) {
      return "norm";
    }
  }
  if (has(n, "adam") || has(n, "sgd")) {
    return "optimizer";
  }
  return "elementwise/other";
}

inline bool is_gpu(const nlohmann::json& e) {
  std::string cat = e.value("cat", "");
  return e.value("ph", "") == "X" &&
         (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset");
}

// NCCL operation from "ncclKernel_<Op>_..." / "ncclDevKernel_<Op>...".
inline std::string oracle_nccl_op(const std::string& name) {
  std::string n = lower(name);
  std::string op = n.substr(n.find('_') + 1);
  op = op.substr(0, op.find_first_of("_("));
  return op;  // "allreduce", "sendrecv", "broadcast", ...
}

struct OracleIteration {
  double dur_us = 0.0;
  double ts_us = 0.0;
  std::map<std::string, int> count;  // by category
  std::map<std::string, int> nccl;   // by op
  double gpu_end_us = 0.0;
};

// Per ProfilerStep: GPU events whose launching runtime call (same correlation) falls in the
// step's window [start, next start), the last window ending with its step.
inline std::vector<OracleIteration> oracle_iterations(const nlohmann::json& doc) {
  std::vector<OracleIteration> its;
  std::unordered_map<long long, double> launch;
  for (const auto& e : doc["traceEvents"]) {
    std::string cat = e.value("cat", "");
    if (cat == "user_annotation" && e.value("name", "").rfind("ProfilerStep#", 0) == 0) {
      OracleIteration it;
      it.ts_us = e["ts"].get<double>();
      it.dur_us = e["dur"].get<double>();
      its.push_back(it);
    }
    if (cat == "cuda_runtime" && e.contains("args") && e["args"].contains("correlation")) {
      launch[e["args"]["correlation"].get<long long>()] = e["ts"].get<double>();
    }
  }
  std::sort(its.begin(), its.end(),
            [](const OracleIteration& a, const OracleIteration& b) { return a.ts_us < b.ts_us; });
  for (const auto& e : doc["traceEvents"]) {
    if (!is_gpu(e)) {
      continue;
    }
    double key = e["ts"].get<double>();
    auto l = launch.find(e["args"].value("correlation", -1LL));
    if (l != launch.end()) {
      key = l->second;
    }
    for (std::size_t i = 0; i < its.size(); ++i) {
      double end = i + 1 < its.size() ? its[i + 1].ts_us : its[i].ts_us + its[i].dur_us;
      if (key >= its[i].ts_us && key < end) {
        std::string c = oracle_category(e);
        ++its[i].count[c];
        if (c == "nccl") {
          ++its[i].nccl[oracle_nccl_op(e["name"])];
        }
        its[i].gpu_end_us =
            std::max(its[i].gpu_end_us, e["ts"].get<double>() + e["dur"].get<double>());
        break;
      }
    }
  }
  return its;
}

}  // namespace tessera::kineto_test
