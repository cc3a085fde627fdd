// The sum of sm90_mixed_gemm's stream-K tail: out = the pieces' fp32 partial sums of each tail
// tile, added in plane order (deterministic), times the per-channel scale, plus the bias.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/common/check.hpp"
#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"

namespace lowbit::cuda {

namespace {

// Columns [col0, n): partials (plane, row, col - col0) with rows of n - col0; tail tile j =
// (col - col0) / 128 has sm90_mixed_sk_pieces(j, ...) planes.
template <typename T>
__global__ void sm90_mixed_sk_reduce_kernel(const float* partials, int m, int col0, int k_blocks, int64_t iters,
                                            int grid, EpilogueArgs e) {
  const int ld = e.n - col0;
  const int64_t units = static_cast<int64_t>(m) * (ld / 8);
  for (int64_t u = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(u / (ld / 8)), c = static_cast<int>(u % (ld / 8)) * 8;
    const int planes = sm90_mixed_sk_pieces(c / kSm90MixedBlockCh, k_blocks, iters, grid);
    float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < planes; ++s) {
      const float4* src = reinterpret_cast<const float4*>(partials + (static_cast<int64_t>(s) * m + row) * ld + c);
      const float4 a = src[0], b = src[1];
      v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
      v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
    }
    finalize_store8<T>(v, row, col0 + c, e);
  }
}

}  // namespace

Status sm90_mixed_gemm_reduce_sk(DType t, const float* partials, int m, int n, int col0, int k_blocks,
                                 int64_t iters, int grid, const void* channel_scales, const void* bias, void* out,
                                 Stream stream) {
  EpilogueArgs e{channel_scales, bias, out, m, n};
  const int threads = 256;
  const int64_t items = static_cast<int64_t>(m) * ((n - col0) / 8);
  const int blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((items + threads - 1) / threads, 65536)));
  const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
  if (t == DType::kF16)
    sm90_mixed_sk_reduce_kernel<__half><<<blocks, threads, 0, st>>>(partials, m, col0, k_blocks, iters, grid, e);
  else
    sm90_mixed_sk_reduce_kernel<__nv_bfloat16><<<blocks, threads, 0, st>>>(partials, m, col0, k_blocks, iters, grid, e);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
