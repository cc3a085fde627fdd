// Helper kernels of the sm80 mixed GEMM: the split-K reduction of the workspace path
// (sm_80 / sm_89, and sm90_mixed_gemm's splits; sm80_mixed_gemm on sm_90 reduces inside the GEMM
// through clusters), through reduce_planes.cuh, and the act-order gather of activation columns.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/epilogue/reduce_planes.cuh"
#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"
#include "cuda/ptx/griddepcontrol.cuh"
#include "lowbit/pack.hpp"

namespace lowbit::cuda {

namespace {

// Every column has `splits` planes (reduce_planes_kernel).
struct SplitPlanes {
  int splits;
  __device__ int operator()(int) const { return splits; }
};

int grid_for(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

// ap[r][j] = a[r][perm[j]] (0 where perm[j] is -1, or out of range: a corrupt index), for
// j < k' = index[0] (at most max_k, the workspace's row capacity): one element per thread (any k;
// the fallback of the staged kernel below). With PDL (ActGatherPlan::pdl) both kernels start
// while the previous kernel of the stream runs, let the next one (the GEMM) launch at once, and
// wait for the previous one before reading a or writing ap (ptx/griddepcontrol.cuh).
template <typename T>
__global__ void mixed_gemm_permute_kernel(const T* a, int m, int k, int max_k, const int32_t* index, T* ap) {
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  const int kp = min(index[0], max_k);
  const int32_t* perm = index + tiled::kActOrderHeader;
  const int64_t total = static_cast<int64_t>(m) * kp;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / kp;
    const int j = static_cast<int>(i % kp);
    const int src = perm[j];
    ap[i] = static_cast<unsigned>(src) < static_cast<unsigned>(k) ? a[row * k + src] : T(0.f);
  }
}

// The same with the row staged: block (c, y) takes rows y, y + gridDim.y, ...; for each it copies
// the row's k values into shared memory with 16-byte loads, then writes packed columns [8 c
// chunk8, 8 (c + 1) chunk8) of it, 8 per thread as one 16-byte store, each value read from shared
// memory at perm[j]. Needs k a multiple of 8, 16-byte aligned a and ap, and k x sizeof(T) <=
// kPermuteSmemBytes (the host checks); k' not a multiple of 8 (only a corrupt index) is written
// element by element. Chunks that start past k' return before the first barrier.
constexpr int kPermuteSmemBytes = 48 * 1024;
template <typename T>
__global__ void mixed_gemm_permute_staged_kernel(const T* a, int m, int k, int max_k, const int32_t* index, T* ap,
                                                 int chunk8) {
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  extern __shared__ uint4 row16[];
  const T* row = reinterpret_cast<const T*>(row16);
  const int kp = min(index[0], max_k);
  const int32_t* perm = index + tiled::kActOrderHeader;
  const int u0 = static_cast<int>(blockIdx.x) * chunk8;
  const int u1 = min(u0 + chunk8, (kp + 7) / 8);
  if (u0 >= u1) return;  // the whole block: no barrier skipped by some threads only
  const bool whole = kp % 8 == 0;
  for (int r = blockIdx.y; r < m; r += gridDim.y) {
    const uint4* src = reinterpret_cast<const uint4*>(a + static_cast<int64_t>(r) * k);
    for (int i = threadIdx.x; i < k / 8; i += blockDim.x) row16[i] = src[i];
    __syncthreads();
    T* dst = ap + static_cast<int64_t>(r) * kp;
    for (int u = u0 + static_cast<int>(threadIdx.x); u < u1; u += blockDim.x) {
      alignas(16) T v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int j = 8 * u + e;
        const int p = j < kp ? __ldg(perm + j) : -1;
        v[e] = static_cast<unsigned>(p) < static_cast<unsigned>(k) ? row[p] : T(0.f);
      }
      if (whole) {
        *reinterpret_cast<uint4*>(dst + 8 * u) = *reinterpret_cast<const uint4*>(v);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if (8 * u + e < kp) dst[8 * u + e] = v[e];
      }
    }
    __syncthreads();  // the next row overwrites the staged one
  }
}

template <typename T>
Status launch_permute(const ActGatherPlan& plan, bool staged, const void* a, int m, int k, int max_k,
                      const int32_t* act_index, void* ap, cudaStream_t st) {
  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(static_cast<unsigned>(plan.threads));
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  if (plan.pdl) attr[0] = pdl_launch_attr();
  cfg.attrs = plan.pdl ? attr : nullptr;
  cfg.numAttrs = plan.pdl ? 1 : 0;
  const T* at = static_cast<const T*>(a);
  T* apt = static_cast<T*>(ap);
  if (staged) {
    const int units = (max_k + 7) / 8;
    cfg.gridDim = dim3(static_cast<unsigned>((units + plan.chunk8 - 1) / plan.chunk8),
                       static_cast<unsigned>(m < 65535 ? (m > 0 ? m : 1) : 65535));
    cfg.dynamicSmemBytes = static_cast<size_t>(k) * sizeof(T);
    LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, &mixed_gemm_permute_staged_kernel<T>, at, m, k, max_k, act_index, apt,
                                       plan.chunk8));
  } else {
    cfg.gridDim = dim3(static_cast<unsigned>(grid_for(static_cast<int64_t>(m) * max_k, plan.threads)));
    LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, &mixed_gemm_permute_kernel<T>, at, m, k, max_k, act_index, apt));
  }
  return Status::Ok();
}

}  // namespace

Status sm80_mixed_gemm_reduce_splits(DType t, const float* partials, int splits, int m, int n,
                                     const void* channel_scales, const void* bias, void* out,
                                     Stream stream) {
  return reduce_planes(t, partials, 0, EpilogueArgs{channel_scales, bias, out, m, n}, SplitPlanes{splits},
                       reinterpret_cast<cudaStream_t>(stream));
}

Status sm80_mixed_gemm_permute_activations(DType t, const void* a, int m, int k, const int32_t* act_index,
                                           void* ap, const ActGatherPlan& plan, Stream stream) {
  const int max_k = static_cast<int>(tiled_act_order_max_k(k));
  const bool staged = plan.chunk8 > 0 && static_cast<int64_t>(k) * 2 <= kPermuteSmemBytes && k % 8 == 0 &&
                      (reinterpret_cast<uintptr_t>(a) & 15) == 0 && (reinterpret_cast<uintptr_t>(ap) & 15) == 0;
  const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
  if (t == DType::kF16) return launch_permute<__half>(plan, staged, a, m, k, max_k, act_index, ap, st);
  return launch_permute<__nv_bfloat16>(plan, staged, a, m, k, max_k, act_index, ap, st);
}

}  // namespace lowbit::cuda
