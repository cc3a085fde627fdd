// The sum of sm90_mixed_gemm's stream-K tail: out = the pieces' fp32 partial sums of each tail
// tile, added in plane order (deterministic), times the per-channel scale, plus the bias
// (reduce_planes.cuh, the kernel sm80_mixed_gemm's splits use too).
#include <cuda_runtime.h>

#include "cuda/epilogue/reduce_planes.cuh"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"

namespace lowbit::cuda {

namespace {

// Tail tile j = c / 128 (c relative to the first tail column) has sm90_mixed_sk_pieces(j, ...)
// planes.
struct TailPlanes {
  int k_blocks;
  int64_t iters;
  int grid;
  __device__ int operator()(int c) const { return sm90_mixed_sk_pieces(c / kSm90MixedBlockCh, k_blocks, iters, grid); }
};

}  // namespace

Status sm90_mixed_gemm_reduce_sk(DType t, const float* partials, int m, int n, int col0, int k_blocks,
                                 int64_t iters, int grid, const void* channel_scales, const void* bias, void* out,
                                 Stream stream) {
  return reduce_planes(t, partials, col0, EpilogueArgs{channel_scales, bias, out, m, n},
                       TailPlanes{k_blocks, iters, grid}, reinterpret_cast<cudaStream_t>(stream));
}

}  // namespace lowbit::cuda
