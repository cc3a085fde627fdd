// Epilogue of the sm80 mixed GEMM: out^T accumulators -> an fp32 (tokens x channels) tile in
// shared memory -> per-channel scale, bias, rounding to f16/bf16 -> 16-byte stores of out.
//
// Three ways out, all deterministic (fixed summation order, no atomics):
//   store():          one CTA owns the tile.
//   store_partial():  split-K through the workspace: fp32 partials, summed in split order by
//                     the reduction kernel (sm80_mixed_gemm_aux.cu).
//   store_cluster():  split-K on sm_90: the splits of a tile form a cluster; after a cluster
//                     barrier each CTA sums a share of the tile from all CTAs' shared memory
//                     (distributed shared memory), in rank order, and stores it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/ptx/cluster.cuh"
#include "cuda/ptx/cvta.cuh"

namespace lowbit::cuda {

struct EpilogueArgs {
  const void* channel_scales;  // per-channel weights: packed scales (1, n) of T, else null
  const void* bias;            // (n) T, or null
  void* out;                   // (m, n) T row-major
  int m;
  int n;
};

namespace epilogue_detail {
LOWBIT_DEVICE float to_f32(__half x) { return __half2float(x); }
LOWBIT_DEVICE float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
LOWBIT_DEVICE uint32_t pack2(__half, float x, float y) {
  __half2 h = __floats2half2_rn(x, y);  // round to nearest even
  return *reinterpret_cast<uint32_t*>(&h);
}
LOWBIT_DEVICE uint32_t pack2(__nv_bfloat16, float x, float y) {
  __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<uint32_t*>(&h);
}
}  // namespace epilogue_detail

// Scale, bias, round and store 8 consecutive outputs out[m_g][n_g .. n_g + 7].
template <typename T>
LOWBIT_DEVICE void finalize_store8(float (&v)[8], int m_g, int n_g, const EpilogueArgs& e) {
  using epilogue_detail::to_f32;
  if (e.channel_scales != nullptr) {
    const T* s = static_cast<const T*>(e.channel_scales);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] *= to_f32(s[tiled::scale_index(e.n, 0, n_g + i)]);
  }
  if (e.bias != nullptr) {
    const T* b = static_cast<const T*>(e.bias);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] += to_f32(b[n_g + i]);
  }
  uint4 o;
  o.x = epilogue_detail::pack2(T(), v[0], v[1]);
  o.y = epilogue_detail::pack2(T(), v[2], v[3]);
  o.z = epilogue_detail::pack2(T(), v[4], v[5]);
  o.w = epilogue_detail::pack2(T(), v[6], v[7]);
  *reinterpret_cast<uint4*>(static_cast<T*>(e.out) + static_cast<int64_t>(m_g) * e.n + n_g) = o;
}

template <typename T, int BLOCK_M, int BLOCK_N, int THREADS>
struct TileEpilogue {
  // Row stride of the fp32 tile: +4 floats so that the accumulator writes of a warp (8
  // channels x 4 token pairs) hit 32 different banks.
  static constexpr int kStride = BLOCK_N + 4;
  // Bytes of the tile when it keeps `rows` token rows (the rows a launch holds).
  LOWBIT_HD static constexpr int bytes(int rows) { return rows * kStride * 4; }
  static constexpr int kUnitsPerRow = BLOCK_N / 8;  // 8 outputs = one 16-byte store
  static_assert(BLOCK_N % 16 == 0, "channels come in strips of 16");

  // Adds a warp's accumulators to the tile (the first k-warp stores, the others add, one
  // k-warp at a time: a fixed order). acc[i][j][e] holds channel 16 (strip0 + i) + g +
  // 8 (e / 2) and token 8 (mblk0 + j) + 2 t + e % 2 (mma C fragment, g = lane / 4,
  // t = lane % 4). Token rows >= rows are dropped (the tile holds `rows`). Ends with a
  // barrier. A: the accumulator type, float, or int32_t for the int8 GEMM (sm89_fp8_gemm.cuh
  // over int8: the same words hold exact int32 sums, integer adds being exact).
  template <int STRIPS, int MBLK, int WARPS_K, typename A>
  LOWBIT_DEVICE static void accumulate(A* red, const A (&acc)[STRIPS][MBLK][4],
                                       int strip0, int mblk0, int wk, int rows) {
    const int lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
#pragma unroll 1
    for (int w = 0; w < WARPS_K; ++w) {
      if (wk == w) {
#pragma unroll
        for (int i = 0; i < STRIPS; ++i)
#pragma unroll
          for (int j = 0; j < MBLK; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int col = (strip0 + i) * 16 + g + 8 * (e / 2);
              const int row = (mblk0 + j) * 8 + 2 * t + (e % 2);
              if (row >= rows) continue;
              A& dst = red[row * kStride + col];
              dst = (w == 0) ? acc[i][j][e] : dst + acc[i][j][e];
            }
      }
      __syncthreads();
    }
  }

  LOWBIT_DEVICE static void read8(const float* red, int row, int col, float (&v)[8]) {
    const float4 a = *reinterpret_cast<const float4*>(red + row * kStride + col);
    const float4 b = *reinterpret_cast<const float4*>(red + row * kStride + col + 4);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  }

  // The whole tile from this CTA: rows < valid_m, channels < n.
  LOWBIT_DEVICE static void store(const float* red, int m0, int n0, int valid_m,
                                  const EpilogueArgs& e) {
    for (int u = threadIdx.x; u < valid_m * kUnitsPerRow; u += THREADS) {
      const int row = u / kUnitsPerRow, col = (u % kUnitsPerRow) * 8;
      if (n0 + col >= e.n) continue;
      float v[8];
      read8(red, row, col, v);
      finalize_store8<T>(v, m0 + row, n0 + col, e);
    }
  }

  // fp32 partial sums of this split: part is the (m, n) fp32 slice of the split.
  LOWBIT_DEVICE static void store_partial(const float* red, float* part, int m0, int n0,
                                          int valid_m, int n) {
    for (int u = threadIdx.x; u < valid_m * kUnitsPerRow; u += THREADS) {
      const int row = u / kUnitsPerRow, col = (u % kUnitsPerRow) * 8;
      if (n0 + col >= n) continue;
      float* dst = part + static_cast<int64_t>(m0 + row) * n + n0 + col;
      const float* src = red + row * kStride + col;
      reinterpret_cast<float4*>(dst)[0] = reinterpret_cast<const float4*>(src)[0];
      reinterpret_cast<float4*>(dst)[1] = reinterpret_cast<const float4*>(src)[1];
    }
  }

  // Split-K inside a cluster (sm_90): CTA `rank` of `ranks` finishes units rank, rank +
  // ranks, ... summing the tiles of ranks 0, 1, .. in order. Both cluster barriers are
  // needed: the first publishes every tile (release / acquire), the second keeps each CTA
  // (and its shared memory) alive until the others have read it (relaxed: no memory ordering
  // is needed there, and the release would wait for this thread's output stores; see
  // ptx::cluster_sync_relaxed).
  LOWBIT_DEVICE static void store_cluster(const float* red, int m0, int n0, int valid_m,
                                          const EpilogueArgs& e) {
    ptx::cluster_sync();
    const int rank = static_cast<int>(ptx::cluster_ctarank());
    const int ranks = static_cast<int>(ptx::cluster_nctarank());
    const uint32_t red_addr = ptx::cvta_shared(red);
    for (int u = rank + ranks * static_cast<int>(threadIdx.x); u < valid_m * kUnitsPerRow;
         u += ranks * THREADS) {
      const int row = u / kUnitsPerRow, col = (u % kUnitsPerRow) * 8;
      if (n0 + col >= e.n) continue;
      const uint32_t off = static_cast<uint32_t>((row * kStride + col) * 4);
      float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
      for (int r = 0; r < ranks; ++r) {
        const uint32_t remote = ptx::mapa_shared(red_addr + off, static_cast<uint32_t>(r));
        const float4 a = ptx::ld_shared_cluster_f32x4(remote);
        const float4 b = ptx::ld_shared_cluster_f32x4(remote + 16);
        v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
        v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
      }
      finalize_store8<T>(v, m0 + row, n0 + col, e);
    }
    ptx::cluster_sync_relaxed();
  }
};

}  // namespace lowbit::cuda
