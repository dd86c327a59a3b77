// SPDX-License-Identifier: Apache-2.0
// The shipped Kineto traces read by the streaming reader agree with a DOM parse of the same
// files: GPU activity counts per category, NCCL kernels per collective, iterations and
// their durations, distributedInfo and NCCL arguments.
#include <gtest/gtest.h>

#include "measured/iterations.h"
#include "measured/kernel_class.h"
#include "measured/kineto_reader.h"
#include "tests/kineto/kineto_oracle.h"

namespace tessera::measured {
namespace {

using kineto_test::testdata;

std::string op_of(CommType t) {
  switch (t) {
    case CommType::kAllReduce:
      return "allreduce";
    case CommType::kBroadcast:
      return "broadcast";
    case CommType::kSendRecv:
      return "sendrecv";
    case CommType::kAllGather:
      return "allgather";
    case CommType::kReduceScatter:
      return "reducescatter";
    default:
      return std::string(comm_type_name(t));
  }
}

class ShippedTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedTrace, MatchesTheDomOracle) {
  const std::string path = testdata(GetParam());
  KinetoTrace t = read_kineto(path);
  nlohmann::json doc = kineto_test::load_dom(path);

  // Every GPU event, by category.
  std::map<std::string, int> expected;
  for (const auto& e : doc["traceEvents"]) {
    if (kineto_test::is_gpu(e)) {
      ++expected[kineto_test::oracle_category(e)];
    }
  }
  std::map<std::string, int> got;
  for (const GpuActivity& a : t.gpu) {
    ++got[std::string(category_name(a.category))];
  }
  EXPECT_EQ(got, expected);

  // Iterations: count, durations, per-iteration category and NCCL counts.
  auto oracle = kineto_test::oracle_iterations(doc);
  IterationSet set = find_iterations(t);
  ASSERT_TRUE(set.from_annotations);
  ASSERT_EQ(set.iterations.size(), oracle.size());
  for (std::size_t i = 0; i < oracle.size(); ++i) {
    const Iteration& it = set.iterations[i];
    EXPECT_NEAR(static_cast<double>(it.end_ns - it.begin_ns) * 1e-3, oracle[i].dur_us, 0.002);
    EXPECT_NEAR(static_cast<double>(it.gpu_end_ns - it.begin_ns) * 1e-3,
                oracle[i].gpu_end_us - oracle[i].ts_us, 0.01);
    std::map<std::string, int> counts;
    for (int c = 0; c < kNumCategories; ++c) {
      if (it.count[c] > 0) {
        counts[std::string(category_name(static_cast<Category>(c)))] =
            static_cast<int>(it.count[c]);
      }
    }
    EXPECT_EQ(counts, oracle[i].count) << "iteration " << i;
    std::map<std::string, int> nccl;
    for (int c = 0; c < kNumCommTypes; ++c) {
      if (it.comm[c].count > 0) {
        nccl[op_of(static_cast<CommType>(c))] = static_cast<int>(it.comm[c].count);
      }
    }
    EXPECT_EQ(nccl, oracle[i].nccl) << "iteration " << i;
  }

  // distributedInfo.
  const auto& d = doc["distributedInfo"];
  EXPECT_EQ(t.dist.rank, d["rank"].get<int>());
  EXPECT_EQ(t.dist.world_size, d["world_size"].get<int>());
  EXPECT_FALSE(t.device_name.empty());
}

INSTANTIATE_TEST_SUITE_P(Kineto, ShippedTrace, ::testing::ValuesIn(kineto_test::trace_names()),
                         [](const auto& p) {
                           std::string n = p.param.substr(0, p.param.find('.'));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(KinetoImport, KnownFigures) {
  KinetoTrace t = read_kineto(testdata("a100-2rank-ddp-rank0.json.gz"));
  IterationSet set = find_iterations(t);
  ASSERT_EQ(set.iterations.size(), 3U);
  EXPECT_EQ(set.iterations[0].step, 4);
  EXPECT_EQ(set.iterations[1].activities.size(), 1258U);
  EXPECT_EQ(set.iterations[1].comm[static_cast<int>(CommType::kAllReduce)].count, 5);
  EXPECT_EQ(set.iterations[1].comm[static_cast<int>(CommType::kBroadcast)].count, 2);
  ASSERT_EQ(t.dist.groups.size(), 1U);
  EXPECT_EQ(t.dist.groups[0].ranks, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(t.dist.nccl_version, "2.17.1");
  // The first all-reduce: 6637568 floats in a group of 2, process group "0" = ranks [0, 1].
  const CommArgs* first = nullptr;
  for (const GpuActivity& a : t.gpu) {
    if (a.comm >= 0 && t.comms[static_cast<std::size_t>(a.comm)].type == CommType::kAllReduce) {
      first = &t.comms[static_cast<std::size_t>(a.comm)];
      break;
    }
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->in_nelems, 6637568);
  EXPECT_EQ(first->bytes(), 6637568LL * 4);
  EXPECT_EQ(first->group_size, 2);
  EXPECT_EQ(first->pg_name, "0");
  EXPECT_EQ(first->pg_ranks, (std::vector<std::int32_t>{0, 1}));
}

TEST(KinetoImport, ClassifiesKernelNames) {
  EXPECT_EQ(classify_kernel("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"),
            Category::kGemm);
  EXPECT_EQ(classify_kernel("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize96x128x32"),
            Category::kGemm);
  EXPECT_EQ(classify_kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6>"),
            Category::kGemm);
  EXPECT_EQ(classify_kernel("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>"),
            Category::kAttention);
  EXPECT_EQ(classify_kernel("fmha_cutlassF_f16_aligned_64x64_rf_sm80"), Category::kAttention);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"),
            Category::kNorm);
  EXPECT_EQ(classify_kernel("void at::native::vectorized_elementwise_kernel<4, {lambda()#1}>"),
            Category::kElementwise);
  EXPECT_EQ(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"),
            Category::kComm);
  EXPECT_EQ(nccl_comm_type("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"),
            CommType::kSendRecv);
  EXPECT_EQ(nccl_comm_type("ncclKernel_ReduceScatter_RING_SIMPLE_Sum_bf16"),
            CommType::kReduceScatter);
  EXPECT_EQ(nccl_comm_type("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"), CommType::kAllGather);
  EXPECT_EQ(nccl_comm_type("ncclKernel_Reduce_RING_LL_Sum_float"), CommType::kReduce);
  EXPECT_FALSE(nccl_comm_type("void gemm_kernel").has_value());
}

}  // namespace
}  // namespace tessera::measured
