// The "sm90_fp8_gemm" kernel family: e4m3 x e4m3 GEMM on Hopper (sm_90a) with TMA, wgmma,
// warp specialization, a persistent tile walk and split-K; tensor/row epilogue scaling or
// DeepSeek-V3 block scaling (fp8_gemm_common.hpp, docs/kernels/fp8_gemm.md).
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm90_fp8_gemm_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSm90Fp8GemmName = "sm90_fp8_gemm";
inline constexpr const char* kSm90Fp8GemmDescription =
    "e4m3 x e4m3 (tensor/row or 1x128 x 128x128 scales) on Hopper: TMA, wgmma, producer/consumer "
    "warpgroups, persistent tiles, split-K";

Status sm90_fp8_gemm_runs_on(const GpuSpec& gpu);
Status sm90_fp8_gemm_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> sm90_fp8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu);
// Tests: a forced plan (config index, splits). Throws lowbit::Error when the plan is invalid.
std::unique_ptr<detail::GemmImpl> sm90_fp8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                               const Sm90Fp8Plan& plan);

// The implementation behind both sm90_fp8_gemm (fp8 weights) and sm90_int8_gemm (int8
// weights; int8_gemm/sm90_int8_gemm_family.cpp), for a problem its family's check accepted.
std::unique_ptr<detail::GemmImpl> sm90_8bit_gemm_make_impl(const GemmDesc& desc, const GpuSpec& gpu,
                                                           const Sm90Fp8Plan& plan);

}  // namespace lowbit::cuda
