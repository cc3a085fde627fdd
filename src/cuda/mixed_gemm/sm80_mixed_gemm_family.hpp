// The "sm80_mixed_gemm" kernel family: f16/bf16 activations x 4/8-bit integer weights
// (symmetric or integer zero points, groups 32/64/128 or per-channel, GPTQ act-order) on
// tensor cores with mma.sync, for sm_80, sm_89 and sm_90. Entry points for the family table
// (families.hpp) and, for tests and benchmarks, a constructor with a forced plan.
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm80_mixed_gemm_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSm80MixedGemmName = "sm80_mixed_gemm";
inline constexpr const char* kSm80MixedGemmDescription =
    "f16/bf16 x 4/8-bit integer weights (symmetric or integer zeros, g32/64/128 or "
    "per-channel, act-order): mma.sync tensor cores, cp.async pipeline, split-K";

Status sm80_mixed_gemm_runs_on(const GpuSpec& gpu);
Status sm80_mixed_gemm_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> sm80_mixed_gemm_make(const GemmDesc& desc, const GpuSpec& gpu);

// The same with the plan given instead of chosen (tests sweep configurations and split
// modes; the workspace split mode also runs on sm_90). Throws lowbit::Error when the plan
// cannot run (a cluster split without sm_90 code).
std::unique_ptr<detail::GemmImpl> sm80_mixed_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                 const MixedGemmPlan& plan);

// The plan the heuristic picks for desc on gpu (what make() will use).
MixedGemmPlan sm80_mixed_gemm_plan(const GemmDesc& desc, const GpuSpec& gpu);

// How many clusters of `splits` CTAs of configuration `config` the GPU keeps resident at once
// for desc.m tokens (the cluster split mode, sm_90; 0 elsewhere or where none fits).
int sm80_mixed_gemm_resident_clusters(const GemmDesc& desc, const GpuSpec& gpu, int config, int splits);

}  // namespace lowbit::cuda
