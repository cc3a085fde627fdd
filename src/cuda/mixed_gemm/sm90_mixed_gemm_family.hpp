// The "sm90_mixed_gemm" kernel family: f16/bf16 activations x 4/8-bit integer weights in the
// tiled layout (the sm80 family's layout, symmetric or integer zero points, groups 32/64/128
// or per-channel) on Hopper (sm_90a): TMA, wgmma with the dequantized weights as the register
// operand, producer/consumer warpgroups, persistent tiles, split-K (docs/kernels/mixed_gemm.md,
// "sm90_mixed_gemm"). For the m where wgmma beats mma.sync (selection rule in select.cpp).
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm90_mixed_gemm_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSm90MixedGemmName = "sm90_mixed_gemm";
inline constexpr const char* kSm90MixedGemmDescription =
    "f16/bf16 x 4/8-bit integer weights (symmetric or integer zeros, g32/64/128 or per-channel) on "
    "Hopper: TMA, wgmma with register-decoded weights, producer/consumer warpgroups, split-K";

Status sm90_mixed_gemm_runs_on(const GpuSpec& gpu);
Status sm90_mixed_gemm_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> sm90_mixed_gemm_make(const GemmDesc& desc, const GpuSpec& gpu);
// Tests: a forced plan (config index, splits). Throws lowbit::Error when the plan is invalid.
std::unique_ptr<detail::GemmImpl> sm90_mixed_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                 const Sm90MixedPlan& plan);

}  // namespace lowbit::cuda
