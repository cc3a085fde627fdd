// Helper kernels of the sm80 mixed GEMM: the split-K reduction of the workspace path
// (sm_80 / sm_89, and sm90_mixed_gemm's splits; sm80_mixed_gemm on sm_90 reduces inside the GEMM
// through clusters), through reduce_planes.cuh, and the act-order gather of activation columns.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

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

// ap[r][j] = a[r][perm[j]] (0 where perm[j] < 0), for j < k' = index[0]: one element per thread
// (any k; the fallback of the staged kernel below).
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

// The same, a row per block (grid-stride over rows): the row's k values staged in shared memory
// with 16-byte loads, then the k' packed columns written 8 per thread as 16-byte stores, each
// element read from shared memory at perm[j]. Needs k and k' multiples of 8 (the tiled layout's
// 64), 16-byte aligned rows and k x sizeof(T) <= kPermuteSmemBytes. Taken from m = 256
// (kPermuteStagedMinRows), where it was measured faster; with few rows its m blocks leave most
// SMs idle. H200, act-order W4 g128 f16 Suite-1 sums, element-per-thread -> staged, two rounds
// (bench/results/2026-11-29-h200-session66/, call 7): m = 16 74.9 -> 83.4 us (sm80_mixed_gemm),
// m = 64 122.4 -> 123.0, m = 256 259.6 / 265.6 -> 237.1 / 239.5, m = 4096 3343 / 3292 -> 3132 / 3070
// (down -16..-19%, o -12..-14%).
constexpr int kPermuteStagedMinRows = 256;
constexpr int kPermuteSmemBytes = 48 * 1024;
template <typename T>
__global__ void mixed_gemm_permute_staged_kernel(const T* a, int m, int k, const int32_t* index, T* ap) {
  extern __shared__ uint4 row16[];
  const T* row = reinterpret_cast<const T*>(row16);
  const int kp = index[0];
  const int32_t* perm = index + tiled::kActOrderHeader;
  for (int r = blockIdx.x; r < m; r += gridDim.x) {
    const uint4* src = reinterpret_cast<const uint4*>(a + static_cast<int64_t>(r) * k);
    for (int i = threadIdx.x; i < k / 8; i += blockDim.x) row16[i] = src[i];
    __syncthreads();
    uint4* dst = reinterpret_cast<uint4*>(ap + static_cast<int64_t>(r) * kp);
    for (int j8 = threadIdx.x; j8 < kp / 8; j8 += blockDim.x) {
      alignas(16) T v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int p = __ldg(perm + 8 * j8 + e);
        v[e] = p >= 0 ? row[p] : T(0.f);
      }
      dst[j8] = *reinterpret_cast<const uint4*>(v);
    }
    __syncthreads();  // the next row overwrites the staged one
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
  const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
  const bool staged = m >= kPermuteStagedMinRows && static_cast<int64_t>(k) * 2 <= kPermuteSmemBytes && k % 8 == 0 &&
                      (reinterpret_cast<uintptr_t>(a) & 15) == 0 && (reinterpret_cast<uintptr_t>(ap) & 15) == 0;
  if (staged) {
    const int grid = m < 65535 ? (m > 0 ? m : 1) : 65535;
    const size_t smem = static_cast<size_t>(k) * 2;
    if (t == DType::kF16)
      mixed_gemm_permute_staged_kernel<__half><<<grid, threads, smem, st>>>(static_cast<const __half*>(a), m, k,
                                                                          act_index, static_cast<__half*>(ap));
    else
      mixed_gemm_permute_staged_kernel<__nv_bfloat16><<<grid, threads, smem, st>>>(
          static_cast<const __nv_bfloat16*>(a), m, k, act_index, static_cast<__nv_bfloat16*>(ap));
  } else {
    const int grid = grid_for(static_cast<int64_t>(m) * (2 * static_cast<int64_t>(k) + 64), threads);
    if (t == DType::kF16)
      mixed_gemm_permute_kernel<__half><<<grid, threads, 0, st>>>(static_cast<const __half*>(a), m, k, act_index,
                                                                 static_cast<__half*>(ap));
    else
      mixed_gemm_permute_kernel<__nv_bfloat16><<<grid, threads, 0, st>>>(
          static_cast<const __nv_bfloat16*>(a), m, k, act_index, static_cast<__nv_bfloat16*>(ap));
  }
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
