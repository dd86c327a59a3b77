// SPDX-License-Identifier: Apache-2.0
// Classifies GPU kernels by name: the naming conventions of cuBLAS/CUTLASS/cuDNN GEMMs
// (gemm, cutlass, cublas, sm80_xmma, ampere_*gemm, implicit_gemm), flash and fused
// attention (flash, fmha), PyTorch's norm kernels, optimizer kernels and NCCL's kernels
// (ncclKernel_<Op>_<Algo>_<Proto>_<RedOp>_<type>, ncclDevKernel_<Op>...).
#pragma once

#include <optional>
#include <string_view>

#include "measured/kineto_trace.h"

namespace tessera::measured {

Category classify_kernel(std::string_view name);
// The collective of an NCCL kernel name, nullopt when `name` is not an NCCL kernel.
std::optional<CommType> nccl_comm_type(std::string_view name);
// PyTorch's "Collective name" argument ("allreduce", "_allgather_base", ...), nullopt if unknown.
std::optional<CommType> collective_name_type(std::string_view name);

}  // namespace tessera::measured
