// The "sm80_int8_gemm" kernel family: int8 W8A8 (SmoothQuant) GEMM with mma.sync m16n8k32
// s8.s8 (sm_80+): per-token activation scales with an optional int32 zero point, per-channel
// weight scales, exact int32 accumulation (int8_gemm_common.hpp). It is the sm89_fp8_gemm
// kernel template instantiated over int8 (sm89_fp8_gemm.cuh), with that family's tile table,
// heuristic and split-K modes (docs/kernels/int8_gemm.md, "sm80_int8_gemm"). Entry points for
// the family table (families.hpp) and, for tests and benchmarks, a constructor with a forced
// plan.
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/fp8_gemm/sm89_fp8_gemm_family.hpp"  // the implementation, sm80_int8_gemm_uses_pdl()
#include "cuda/heuristics/sm89_fp8_gemm_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSm80Int8GemmName = "sm80_int8_gemm";
inline constexpr const char* kSm80Int8GemmDescription =
    "int8 x int8 W8A8 (per-token x per-channel scales, optional token zero point): mma.sync m16n8k32 s8, "
    "exact int32 sums, cp.async pipeline, split-K (cluster reduction on sm_90); sm_80+";

// The plan is the sm89 fp8 GEMM's: a row of kSm89Fp8Configs, splits and split mode (the
// byte counts per stage are the same for both 8-bit element types, so is the model).
using Sm80Int8Plan = Sm89Fp8Plan;

Status sm80_int8_gemm_runs_on(const GpuSpec& gpu);
Status sm80_int8_gemm_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> sm80_int8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu);

// The same with the plan given instead of chosen (tests sweep configurations and split
// modes; the workspace split mode also runs on sm_90). Throws lowbit::Error when the plan
// cannot run (a cluster split without sm_90 code, splits out of 1..8, a bad config).
std::unique_ptr<detail::GemmImpl> sm80_int8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                const Sm80Int8Plan& plan);

// The plan the heuristic (choose_sm89_fp8_plan, with this family's occupancy) picks for desc
// on gpu (what make() will use).
Sm80Int8Plan sm80_int8_gemm_plan(const GemmDesc& desc, const GpuSpec& gpu);

// Whether launches use programmatic dependent launch (sm_90 code on an sm_90 GPU, unless
// LOWBIT_INT8_GEMM_PDL=0 in the environment when the Gemm is built): sm80_int8_gemm_uses_pdl(),
// declared with the implementation in fp8_gemm/sm89_fp8_gemm_family.hpp. Contract: the kernel
// just before run() on the stream must not write the packed weights (include/lowbit/gemm.hpp).

}  // namespace lowbit::cuda
