// The sum of fp32 partial planes that split-K and stream-K kernels leave in a workspace, and
// the epilogue after it (per-channel scale, bias, rounding to f16 / bf16): one kernel for
// sm80_mixed_gemm's splits (every column has `splits` planes) and sm90_mixed_gemm's stream-K
// tail (a tail tile's column has as many planes as CTAs met its iterations). Planes are added
// in order 0, 1, ...: the result does not depend on the launch (deterministic).
//
// Workspace: plane s, row r, column c (relative to col0) at partials[(s m + r) ld + c], ld =
// n - col0; the kernel writes out[r][col0 + c], 8 columns per thread (n - col0 a multiple of 8).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/common/check.hpp"
#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "lowbit/dtype.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

// `planes(c)`: how many planes hold column c (relative to col0); a device-callable functor.
template <typename T, typename Planes>
__global__ void reduce_planes_kernel(const float* partials, int col0, EpilogueArgs e, Planes planes) {
  const int ld = e.n - col0;
  const int64_t units = static_cast<int64_t>(e.m) * (ld / 8);
  for (int64_t u = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(u / (ld / 8)), c = static_cast<int>(u % (ld / 8)) * 8;
    const int np = planes(c);
    float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < np; ++s) {
      const float4* src = reinterpret_cast<const float4*>(partials + (static_cast<int64_t>(s) * e.m + row) * ld + c);
      const float4 a = src[0], b = src[1];
      v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
      v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
    }
    finalize_store8<T>(v, row, col0 + c, e);
  }
}

// Enqueues reduce_planes_kernel for activations (and output) of dtype t (f16 or bf16): a
// grid-stride loop over one thread per 8 outputs, at most 65536 blocks of 256 threads.
template <typename Planes>
Status reduce_planes(DType t, const float* partials, int col0, const EpilogueArgs& e, Planes planes,
                     cudaStream_t stream) {
  const int threads = 256;
  const int64_t items = static_cast<int64_t>(e.m) * ((e.n - col0) / 8);
  const int blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((items + threads - 1) / threads, 65536)));
  if (t == DType::kF16)
    reduce_planes_kernel<__half><<<blocks, threads, 0, stream>>>(partials, col0, e, planes);
  else
    reduce_planes_kernel<__nv_bfloat16><<<blocks, threads, 0, stream>>>(partials, col0, e, planes);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
