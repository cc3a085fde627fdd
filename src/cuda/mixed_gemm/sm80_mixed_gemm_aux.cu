// Helper kernels of the sm80 mixed GEMM: the split-K reduction of the workspace path
// (sm_80 / sm_89; sm_90 reduces inside the GEMM through clusters) and the act-order gather
// of activation columns.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"

namespace lowbit::cuda {

namespace {

// out[m][n..n+7] = sum_s partials[s][m][n..n+7] (s = 0, 1, ... in order) * scale + bias.
template <typename T>
__global__ void mixed_gemm_reduce_splits_kernel(const float* partials, int splits, int m, int n,
                                                EpilogueArgs e) {
  const int64_t units = static_cast<int64_t>(m) * (n / 8);
  for (int64_t u = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(u / (n / 8)), col = static_cast<int>(u % (n / 8)) * 8;
    float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < splits; ++s) {
      const float4* src = reinterpret_cast<const float4*>(partials + (static_cast<int64_t>(s) * m + row) * n + col);
      const float4 a = src[0], b = src[1];
      v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
      v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
    }
    finalize_store8<T>(v, row, col, e);
  }
}

// ap[r][j] = a[r][perm[j]] (0 where perm[j] < 0), for j < k' = index[0].
template <typename T>
__global__ void mixed_gemm_permute_kernel(const T* a, int m, int k, const int32_t* index, T* ap) {
  const int kp = index[0];
  const int32_t* perm = index + tiled::kActOrderHeader;
  const int64_t total = static_cast<int64_t>(m) * kp;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / kp;
    const int j = static_cast<int>(i % kp);
    const int src = perm[j];
    ap[i] = src >= 0 ? a[row * k + src] : T(0.f);
  }
}

int grid_for(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

Status sm80_mixed_gemm_reduce_splits(DType t, const float* partials, int splits, int m, int n,
                                     const void* channel_scales, const void* bias, void* out,
                                     Stream stream) {
  EpilogueArgs e{channel_scales, bias, out, m, n};
  const int threads = 256;
  const int grid = grid_for(static_cast<int64_t>(m) * (n / 8), threads);
  if (t == DType::kF16)
    mixed_gemm_reduce_splits_kernel<__half><<<grid, threads, 0, stream>>>(partials, splits, m, n, e);
  else
    mixed_gemm_reduce_splits_kernel<__nv_bfloat16><<<grid, threads, 0, stream>>>(partials, splits, m, n, e);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

Status sm80_mixed_gemm_permute_activations(DType t, const void* a, int m, int k,
                                           const int32_t* act_index, void* ap, Stream stream) {
  const int threads = 256;
  const int grid = grid_for(static_cast<int64_t>(m) * (2 * static_cast<int64_t>(k) + 64), threads);
  if (t == DType::kF16)
    mixed_gemm_permute_kernel<__half><<<grid, threads, 0, stream>>>(static_cast<const __half*>(a), m, k,
                                                                   act_index, static_cast<__half*>(ap));
  else
    mixed_gemm_permute_kernel<__nv_bfloat16><<<grid, threads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(a), m, k, act_index, static_cast<__nv_bfloat16*>(ap));
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
