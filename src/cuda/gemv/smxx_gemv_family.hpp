// The "smxx_gemv" kernel family: decode GEMV for m = 1..8 with 1, 2, 3, 4, 5, 6 or 8-bit
// integer weights in the gemv layout (include/lowbit/pack_gemv.hpp), f16/bf16 activations
// (any zero-point mode, group 32/64/128 or per-channel) or int8 per-token activations (4-
// and 8-bit weights), f16/bf16/f32 output, optional bias. docs/kernels/gemv.md.
//
// Entry points for the family table (families.hpp), and for tests and benchmarks a
// constructor with a forced launch and the launcher on raw device pointers.
#pragma once

#include <memory>

#include "api/gemm_impl.hpp"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/smxx_gemv_heuristic.hpp"

namespace lowbit::cuda {

inline constexpr const char* kSmxxGemvName = "smxx_gemv";
inline constexpr const char* kSmxxGemvDescription =
    "decode GEMV, m <= 8: 1-6/8-bit integer weights (any zero point, g32/64/128 or per-channel) "
    "x f16/bf16 or int8 activations on mma.sync, one kernel per call; reads the tiled layout in place";

Status smxx_gemv_runs_on(const GpuSpec& gpu);
Status smxx_gemv_can_implement(const GemmDesc& desc, const GpuSpec& gpu);
std::unique_ptr<detail::GemmImpl> smxx_gemv_make(const GemmDesc& desc, const GpuSpec& gpu);

// The launch make() would use (tests print it; the bench records it).
gemv::GemvLaunch smxx_gemv_launch_for(const GemmDesc& desc, const GpuSpec& gpu);

// Whether launches use programmatic dependent launch (sm_90 with sm_90 code; disabled by
// LOWBIT_GEMV_PDL=0).
bool smxx_gemv_uses_pdl(const GpuSpec& gpu);

}  // namespace lowbit::cuda
