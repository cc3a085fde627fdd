// The "sm90_int8_gemm" kernel family: int8 W8A8 (SmoothQuant) GEMM on Hopper (sm_90a):
// sm90_fp8_gemm's TMA + wgmma kernel with s8 x s8 operands and exact int32 accumulation,
// per-token x per-channel scales and the activations' zero point in the epilogue
// (int8_gemm_common.hpp, docs/kernels/int8_gemm.md).
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm90_fp8_gemm_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSm90Int8GemmName = "sm90_int8_gemm";
inline constexpr const char* kSm90Int8GemmDescription =
    "int8 x int8 W8A8 (per-token x per-channel scales, token zero points) on Hopper: the "
    "sm90_fp8_gemm kernel with s8 wgmma and int32 accumulation";

Status sm90_int8_gemm_runs_on(const GpuSpec& gpu);
Status sm90_int8_gemm_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> sm90_int8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu);
// Tests: a forced plan (config index, splits; sk_tiles must be 0). Throws lowbit::Error when
// the problem or the plan is invalid.
std::unique_ptr<detail::GemmImpl> sm90_int8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                const Sm90Fp8Plan& plan);

}  // namespace lowbit::cuda
