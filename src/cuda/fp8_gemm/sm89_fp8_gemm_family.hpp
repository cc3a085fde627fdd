// The "sm89_fp8_gemm" kernel family: e4m3 x e4m3 GEMM with mma.sync.m16n8k32 (sm_89 Ada; also
// runs on Hopper, where it is the small-m kernel), tensor/row epilogue scaling or DeepSeek-V3
// block scaling (fp8_gemm_common.hpp, docs/kernels/fp8_gemm.md, "sm89_fp8_gemm"). Entry points
// for the family table (families.hpp) and, for tests and benchmarks, a constructor with a
// forced plan.
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm89_fp8_gemm_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSm89Fp8GemmName = "sm89_fp8_gemm";
inline constexpr const char* kSm89Fp8GemmDescription =
    "e4m3 x e4m3 (tensor/row or 1x128 x 128x128 scales): mma.sync m16n8k32, cp.async pipeline, "
    "split-K (cluster reduction on sm_90); Ada, and small m on Hopper";

Status sm89_fp8_gemm_runs_on(const GpuSpec& gpu);
Status sm89_fp8_gemm_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> sm89_fp8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu);

// The same with the plan given instead of chosen (tests sweep configurations and split
// modes; the workspace split mode also runs on sm_90). Throws lowbit::Error when the plan
// cannot run (a cluster split without sm_90 code, splits out of 1..8, a bad config).
std::unique_ptr<detail::GemmImpl> sm89_fp8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                               const Sm89Fp8Plan& plan);

// The plan the heuristic picks for desc on gpu (what make() will use).
Sm89Fp8Plan sm89_fp8_gemm_plan(const GemmDesc& desc, const GpuSpec& gpu);

// How many CTAs of configuration `config` one SM of gpu holds for desc.m tokens (the occupancy
// calculator; unpadded, i.e. without a plan's ctas_per_sm_cap).
int sm89_fp8_gemm_ctas_per_sm(const GemmDesc& desc, const GpuSpec& gpu, int config);

// How many clusters of `splits` CTAs of configuration `config` the GPU keeps resident at once
// for desc.m tokens (the cluster split mode, sm_90; 0 elsewhere or where none fits).
int sm89_fp8_gemm_resident_clusters(const GemmDesc& desc, const GpuSpec& gpu, int config, int splits);

// Whether launches use programmatic dependent launch (sm_90 code on an sm_90 GPU, unless
// LOWBIT_FP8_GEMM_PDL=0 in the environment when the Gemm is built). Contract: the kernel just
// before run() on the stream must not write the packed weights (include/lowbit/gemm.hpp).
bool sm89_fp8_gemm_uses_pdl(const GpuSpec& gpu);

// The implementation behind both sm89_fp8_gemm (fp8 weights) and sm80_int8_gemm (int8
// weights; int8_gemm/sm80_int8_gemm_family.cpp), for a problem its family's check accepted,
// with a forced plan (checked here: throws lowbit::Error when it cannot run). The plan of
// either: sm89_fp8_gemm_plan() (occupancy of the problem's own kernels).
std::unique_ptr<detail::GemmImpl> sm89_8bit_gemm_make_impl(const GemmDesc& desc, const GpuSpec& gpu,
                                                           const Sm89Fp8Plan& plan);
// sm80_int8_gemm's PDL switch (LOWBIT_INT8_GEMM_PDL), next to sm89_fp8_gemm_uses_pdl.
bool sm80_int8_gemm_uses_pdl(const GpuSpec& gpu);

}  // namespace lowbit::cuda
