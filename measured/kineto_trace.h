// SPDX-License-Identifier: Apache-2.0
// What Tessera keeps of a PyTorch profiler (Kineto) trace: GPU activities (kernels, memcpy,
// memset) with their streams and correlation ids, the CUDA runtime calls that launched or
// waited for them, ProfilerStep#N annotations, NCCL kernel arguments, memory samples and
// distributedInfo. Everything else in the file (CPU operators, flows) is skipped while reading.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera::measured {

// What a GPU activity does, from its category and kernel name (kernel_class.h).
enum class Category : unsigned char {
  kGemm,         // gemm / cutlass / cublas / xmma / implicit-GEMM convolutions
  kAttention,    // flash / fmha / fused attention
  kNorm,         // layer, RMS, batch and group norm
  kOptimizer,    // Adam / SGD update kernels
  kElementwise,  // every other kernel (elementwise, reductions, copies by kernel, ...)
  kMemcpy,       // gpu_memcpy activities
  kMemset,       // gpu_memset activities
  kComm,         // NCCL kernels
};
constexpr int kNumCategories = 8;
std::string_view category_name(Category c);

// NCCL's operation, from the kernel name (ncclKernel_AllReduce_RING_LL_Sum_float,
// ncclDevKernel_SendRecv, ...).
enum class CommType : unsigned char {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,  // point-to-point (ncclSend/ncclRecv/SendRecv kernels)
  kOther,
};
constexpr int kNumCommTypes = 8;
std::string_view comm_type_name(CommType t);

// The arguments PyTorch records on NCCL kernels (record_shapes + NCCL metadata); -1 / empty
// where the trace does not say.
struct CommArgs {
  CommType type = CommType::kOther;
  std::int64_t in_nelems = -1;
  std::int64_t out_nelems = -1;
  std::int32_t group_size = -1;
  std::string dtype;                   // "Float", "BFloat16", ...
  std::string pg_name;                 // "Process Group Name"
  std::vector<std::int32_t> pg_ranks;  // "Process Group Ranks"
  // Payload in NCCL's convention (the larger of input and output), -1 when unknown.
  [[nodiscard]] std::int64_t bytes() const;
};
int dtype_size(std::string_view dtype);  // bytes per element of a PyTorch dtype name, 0 unknown

struct GpuActivity {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::int64_t stream = -1;
  std::int64_t correlation = -1;
  std::int64_t bytes = -1;  // memcpy / memset size
  std::uint32_t name = 0;   // KinetoTrace::names
  std::int32_t comm = -1;   // KinetoTrace::comms, for NCCL kernels
  std::int32_t device = -1;
  Category category = Category::kElementwise;
  [[nodiscard]] std::int64_t end_ns() const { return ts_ns + dur_ns; }
};

struct RuntimeCall {  // cuda_runtime / cuda_driver
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::int64_t correlation = -1;
  std::int64_t tid = 0;
  std::uint32_t name = 0;
  [[nodiscard]] std::int64_t end_ns() const { return ts_ns + dur_ns; }
};

struct StepAnnotation {  // ProfilerStep#N
  std::int64_t step = 0;
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
};

struct MemorySample {  // [memory] instant events of profile_memory=True
  std::int64_t ts_ns = 0;
  std::int64_t total_allocated = 0;
  std::int32_t device_type = -1;  // 1: CUDA
  std::int32_t device_id = -1;
};

struct ProcessGroup {
  std::string name;
  std::string desc;
  std::int32_t size = -1;
  std::vector<std::int32_t> ranks;
};

struct DistributedInfo {
  std::string backend;
  std::int32_t rank = -1;
  std::int32_t world_size = -1;
  std::string nccl_version;
  std::vector<ProcessGroup> groups;  // pg_config
};

// Hashes std::string and std::string_view alike, so that name_index is searched without
// building a string.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct KinetoTrace {
  std::string path;
  std::vector<GpuActivity> gpu;  // in file order
  std::vector<RuntimeCall> runtime;
  std::vector<StepAnnotation> steps;  // sorted by ts
  std::vector<CommArgs> comms;
  std::vector<MemorySample> memory;
  DistributedInfo dist;
  std::string device_name;  // deviceProperties[0].name
  std::int64_t device_memory = -1;
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_index;
  std::uint64_t events = 0;      // traceEvents entries seen
  std::uint64_t json_bytes = 0;  // decompressed size

  std::uint32_t intern(std::string_view name);
  [[nodiscard]] const std::string& name_of(const GpuActivity& a) const { return names[a.name]; }
  // Largest "Total Allocated" of a CUDA device, -1 without memory samples.
  [[nodiscard]] std::int64_t peak_allocated() const;
};

}  // namespace tessera::measured
