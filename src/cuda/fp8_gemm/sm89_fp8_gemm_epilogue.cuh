// Epilogue of the sm89 fp8 GEMM: the CTA's fp32 tile (tokens x channels, in shared memory,
// built by TileEpilogue::accumulate of the sm80 family: the same out^T fragment mapping) ->
// scales, bias, rounding to f16 / bf16 -> 16-byte stores of out.
//
//   scaled mode: out = (acc * sa[m]) * sw[n] (+ bias), in fp32 (fp8_gemm_common.hpp);
//   block mode:  out = acc (+ bias): the block scales were applied in the main loop;
//   int8 (sm80_int8_gemm): the tile holds int32 sums (TileEpilogue::accumulate over int32_t); int8_scale_tile()
//                turns each into this split's fp32 partial
//                  (float(acc - za[m] * wsum[n]) * sa[m]) * sw[n]   (za term in split 0 only)
//                in place (int8_gemm_common.hpp), then out = sum of partials (+ bias) as in
//                block mode.
//
// Three ways out, all deterministic (fixed summation order, no atomics):
//   store():          one CTA owns the tile;
//   store_partial():  (TileEpilogue) split-K through the workspace, summed in split order by
//                     sm89_fp8_gemm_reduce_splits();
//   store_cluster():  split-K on sm_90: the splits of a tile form a cluster; after a cluster
//                     barrier each CTA sums a share of the tile from every CTA's shared memory
//                     (distributed shared memory), in rank order, and stores it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "cuda/fp8_gemm/sm89_fp8_gemm_params.hpp"
#include "cuda/ptx/cluster.cuh"
#include "cuda/ptx/cvta.cuh"

namespace lowbit::cuda {

namespace sm89_fp8_detail {

LOWBIT_DEVICE uint32_t pack2(bool bf16, float x, float y) {
  if (bf16) {
    __nv_bfloat162 h = __floats2bfloat162_rn(x, y);  // round to nearest even
    return *reinterpret_cast<uint32_t*>(&h);
  }
  __half2 h = __floats2half2_rn(x, y);
  return *reinterpret_cast<uint32_t*>(&h);
}

// One bias element (f16 / bf16 bits) as fp32.
LOWBIT_DEVICE float bias_f32(bool bf16, const void* bias, int n) {
  const unsigned short bits = __ldg(static_cast<const unsigned short*>(bias) + n);
  return bf16 ? __bfloat162float(__ushort_as_bfloat16(bits)) : __half2float(__ushort_as_half(bits));
}

}  // namespace sm89_fp8_detail

// Scale (scaled mode), bias, round and store 8 consecutive outputs out[m_g][n_g .. n_g + 7].
LOWBIT_DEVICE void sm89_fp8_finalize_store8(float (&v)[8], int m_g, int n_g, const Sm89Fp8GemmParams& p,
                                            bool scaled) {
  const bool bf16 = p.out_bf16 != 0;
  if (scaled) {
    // (acc * sa) * sw in this order: the contract of fp8_gemm_common.hpp.
    const float sa = __ldg(p.sa + static_cast<int64_t>(m_g) * p.sa_row);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = (v[i] * sa) * __ldg(p.sw + static_cast<int64_t>(n_g + i) * p.sw_row);
  }
  if (p.bias != nullptr) {
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] += sm89_fp8_detail::bias_f32(bf16, p.bias, n_g + i);
  }
  uint4 o;
  o.x = sm89_fp8_detail::pack2(bf16, v[0], v[1]);
  o.y = sm89_fp8_detail::pack2(bf16, v[2], v[3]);
  o.z = sm89_fp8_detail::pack2(bf16, v[4], v[5]);
  o.w = sm89_fp8_detail::pack2(bf16, v[6], v[7]);
  *reinterpret_cast<uint4*>(static_cast<unsigned char*>(p.out) + (static_cast<int64_t>(m_g) * p.n + n_g) * 2) = o;
}

template <int BLOCK_M, int BLOCK_N, int THREADS>
struct Sm89Fp8Epilogue {
  // accumulate(), read8(), store_partial(), bytes(): the fp32 tile of the sm80 family (its
  // element type parameter only matters to its own store paths, which are not used here).
  using Tile = TileEpilogue<float, BLOCK_M, BLOCK_N, THREADS>;
  static constexpr int kUnitsPerRow = BLOCK_N / 8;  // 8 outputs = one 16-byte store

  // int8: the int32 tile -> this split's fp32 partial, in place (each thread rewrites the
  // 8 words it read): x = acc - za[m] * wsum[n] in int64 (|za * wsum| reaches 2^31 * 128;
  // only with zero_term, i.e. in split 0, and only with zero points), then one rounding
  // to fp32 and (x * sa[m]) * sw[n]. Rows < valid_m, channels < n (the others are never
  // stored). Ends with a barrier.
  LOWBIT_DEVICE static void int8_scale_tile(float* red, int m0, int n0, int valid_m, const Sm89Fp8GemmParams& p,
                                            bool zero_term) {
    const bool zp = zero_term && p.za != nullptr;
    for (int u = threadIdx.x; u < valid_m * kUnitsPerRow; u += THREADS) {
      const int row = u / kUnitsPerRow, col = (u % kUnitsPerRow) * 8;
      const int m_g = m0 + row, n_g = n0 + col;
      if (n_g >= p.n) continue;
      int32_t* word = reinterpret_cast<int32_t*>(red) + row * Tile::kStride + col;
      const int4 lo = *reinterpret_cast<const int4*>(word);
      const int4 hi = *reinterpret_cast<const int4*>(word + 4);
      const int32_t acc[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      const int64_t za = zp ? static_cast<int64_t>(__ldg(p.za + m_g)) : 0;
      const float sa = __ldg(p.sa + m_g);
      float v[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t x = zp ? acc[i] - za * __ldg(p.wsum + n_g + i) : acc[i];
        v[i] = (__ll2float_rn(x) * sa) * __ldg(p.sw + n_g + i);  // round to nearest, once
      }
      float* dst = red + row * Tile::kStride + col;
      *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      *reinterpret_cast<float4*>(dst + 4) = make_float4(v[4], v[5], v[6], v[7]);
    }
    __syncthreads();
  }

  // The whole tile from this CTA: rows < valid_m, channels < n.
  LOWBIT_DEVICE static void store(const float* red, int m0, int n0, int valid_m, const Sm89Fp8GemmParams& p,
                                  bool scaled) {
    for (int u = threadIdx.x; u < valid_m * kUnitsPerRow; u += THREADS) {
      const int row = u / kUnitsPerRow, col = (u % kUnitsPerRow) * 8;
      if (n0 + col >= p.n) continue;
      float v[8];
      Tile::read8(red, row, col, v);
      sm89_fp8_finalize_store8(v, m0 + row, n0 + col, p, scaled);
    }
  }

  // Split-K inside a cluster (sm_90): CTA `rank` of `ranks` finishes units rank, rank +
  // ranks, ... summing the tiles of ranks 0, 1, ... in order. Both cluster barriers are
  // needed: the first publishes every tile (release / acquire), the second keeps each CTA
  // (and its shared memory) alive until the others have read it (relaxed: no memory ordering
  // is needed there, and the release would wait for this thread's output stores; see
  // ptx::cluster_sync_relaxed).
  LOWBIT_DEVICE static void store_cluster(const float* red, int m0, int n0, int valid_m,
                                          const Sm89Fp8GemmParams& p, bool scaled) {
    ptx::cluster_sync();
    const int rank = static_cast<int>(ptx::cluster_ctarank());
    const int ranks = static_cast<int>(ptx::cluster_nctarank());
    const uint32_t red_addr = ptx::cvta_shared(red);
    for (int u = rank + ranks * static_cast<int>(threadIdx.x); u < valid_m * kUnitsPerRow; u += ranks * THREADS) {
      const int row = u / kUnitsPerRow, col = (u % kUnitsPerRow) * 8;
      if (n0 + col >= p.n) continue;
      const uint32_t off = static_cast<uint32_t>((row * Tile::kStride + col) * 4);
      float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
      for (int r = 0; r < ranks; ++r) {
        const uint32_t remote = ptx::mapa_shared(red_addr + off, static_cast<uint32_t>(r));
        const float4 a = ptx::ld_shared_cluster_f32x4(remote);
        const float4 b = ptx::ld_shared_cluster_f32x4(remote + 16);
        v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
        v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
      }
      sm89_fp8_finalize_store8(v, m0 + row, n0 + col, p, scaled);
    }
    ptx::cluster_sync_relaxed();
  }
};

}  // namespace lowbit::cuda
