// Internal: the launch entry points of sm90_int8_gemm's kernels (sm90_int8_gemm_kernels.cu),
// for the family's host code. Parameters, configurations and shared-memory sizes are
// sm90_fp8_gemm's (fp8_gemm/sm90_fp8_gemm_params.hpp): the kernel is the same template.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cuda/fp8_gemm/sm90_fp8_gemm_params.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

// Raises the kernel's dynamic shared-memory limit on the current device (host, once per device).
Status sm90_int8_gemm_prepare(int config);
// One persistent launch of `grid` CTAs; `a`, `w`: uint8 maps with 128-byte boxes (as fp8);
// `out`: 16-bit elements in 64 x 64 boxes. pdl: the first stages' weight tiles before
// griddepcontrol.wait. Split-K (p.splits > 1): sum with sm90_fp8_gemm_reduce() (PDL too).
Status sm90_int8_gemm_launch(int config, const CUtensorMap& a, const CUtensorMap& w, const CUtensorMap& out,
                             const Sm90Fp8Params& p, int grid, bool pdl, cudaStream_t stream);

}  // namespace lowbit::cuda
