// Helper kernels of the sm80 mixed GEMM: the split-K reduction of the workspace path
// (sm_80 / sm_89, and sm90_mixed_gemm's splits; sm80_mixed_gemm on sm_90 reduces inside the GEMM
// through clusters), through reduce_planes.cuh, and the act-order gather of activation columns.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/common/check.hpp"
#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/epilogue/reduce_planes.cuh"
#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"

namespace lowbit::cuda {

namespace {

// Every column has `splits` planes (reduce_planes_kernel).
struct SplitPlanes {
  int splits;
  __device__ int operator()(int) const { return splits; }
};

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
  return reduce_planes(t, partials, 0, EpilogueArgs{channel_scales, bias, out, m, n}, SplitPlanes{splits},
                       reinterpret_cast<cudaStream_t>(stream));
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
