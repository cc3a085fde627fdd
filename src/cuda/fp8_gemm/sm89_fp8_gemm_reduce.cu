// The split-K reduction of the sm89 fp8 GEMM's workspace path (sm_89, and sm_90 when a
// cluster cannot be used), also that of sm80_int8_gemm (sm_80+): out = epilogue(sum over
// splits of the fp32 partials, in split order). Deterministic: every output is one
// fixed-order sum. Plain fp32 loads and adds: built for every architecture of the build.
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/fp8_gemm/sm89_fp8_gemm_epilogue.cuh"
#include "cuda/fp8_gemm/sm89_fp8_gemm_params.hpp"

namespace lowbit::cuda {

namespace {

// One thread per 8 consecutive outputs out[row][col .. col + 7] (grid-stride).
__global__ void sm89_fp8_gemm_reduce_kernel(const Sm89Fp8GemmParams p, int splits, bool scaled) {
  const int64_t units = static_cast<int64_t>(p.m) * (p.n / 8);
  const int64_t slice = static_cast<int64_t>(p.m) * p.n;
  for (int64_t u = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(u / (p.n / 8)), col = static_cast<int>(u % (p.n / 8)) * 8;
    float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < splits; ++s) {
      const float* part = p.partials + s * slice + static_cast<int64_t>(row) * p.n + col;
      const float4* src = reinterpret_cast<const float4*>(part);
      const float4 a = src[0], b = src[1];
      v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
      v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
    }
    sm89_fp8_finalize_store8(v, row, col, p, scaled);
  }
}

}  // namespace

Status sm89_fp8_gemm_reduce_splits(const Sm89Fp8GemmParams& p, bool partials_scaled, int splits, Stream stream) {
  const int threads = 256;
  const int64_t units = static_cast<int64_t>(p.m) * (p.n / 8);
  const int64_t blocks = (units + threads - 1) / threads;
  const int grid = static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
  sm89_fp8_gemm_reduce_kernel<<<grid, threads, 0, stream>>>(p, splits, !partials_scaled);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
