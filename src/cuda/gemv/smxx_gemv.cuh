// The low-bit GEMV for decode: y[m, n] = x[m, k] * dequant(W)[n, k]^T (+ bias), m = 1..8,
// 1..8-bit weights in the gemv layout (smxx_gemv_layout.hpp), f16 / bf16 activations
// through mma.m16n8k16 or int8 activations through mma.m16n8k32, fp32 (int32) accumulation.
// Design and measurements: docs/kernels/gemv.md (v5).
//
// Work decomposition (v5, "streams"). One block per SM (or a few, see the heuristic) owns a
// contiguous, balanced range of 16-row tiles [t0, t1): its weights are one contiguous range
// of the packed buffer, items (tile, 256-column chunk) in memory order. Item l of the block
// (l = (tile - t0) * chunks + chunk) belongs to warp l % warps, so every warp streams the same
// number of items (+-1) and no block-wide barrier stands in the main loop:
//   * each warp has its own ring of `ring` shared-memory slots, one item each (weights +
//     scale / zero entries), filled by cp.async.bulk (sm_90, one lane, completion on the
//     slot's mbarrier) or by cp.async (sm_80+, every lane, cp.async.mbarrier.arrive.noinc);
//   * the first `ring` items of every warp (and, on sm_90, an L2 prefetch of the next
//     l2_prefetch bytes of the block's range and of the activations) are requested BEFORE
//     griddepcontrol.wait: with PDL they stream in while the previous kernel finishes;
//   * after the wait: activations staged once, correction table computed once (two block
//     barriers), then each warp loops wait item -> compute -> refill its slot;
//   * per tile, the warps' fp32 partial sums meet in shared memory: each warp writes its
//     part and arrives on the tile buffer's "full" mbarrier; warp (tile % warps) sums the
//     parts in warp order (fixed: deterministic) one tile later, writes y and arrives on the
//     buffer's "empty" mbarrier. kRedBufs buffers rotate; only the summing warp ever waits.
//
// Arithmetic (per group of 32 / 64 / 128 columns, or per chunk for per-channel weights):
// the weights enter the mma as c_R + q (one lop3 per two codes, smxx_gemv_layout.hpp); each
// chain starts from cg = -sum (c_R + z_sym) x, computed once per block per (chunk, group) and
// kept in shared memory; with stored zero points + (z_sym - z) sum x. So the chain ends at
// sum (q - z) x (exact products, fp32 accumulation) and acc += s * chain. The activations
// are the mma's B operand (n = 8: the batch), so m = 2..8 costs the same instruction stream
// as m = 1.
//
// PDL contract: the packed weights, scales and zero points are read before
// griddepcontrol.wait, so the kernel that precedes this one in the stream must not write
// them (weights are constants of a model; LOWBIT_GEMV_PDL=0 turns PDL off). Everything else
// (activations, bias, x scales, the output) is touched only after the wait.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "cuda/common/smxx_convert.cuh"
#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/cp_async_bulk.cuh"
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_global_nc.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/mma.cuh"
#include "cuda/ptx/mma_int8.cuh"
#include "cuda/ptx/prefetch_bulk_l2.cuh"
#include "cuda/ptx/prmt.cuh"
#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::gemv {

namespace detail {

template <int kAct>
using ActT = std::conditional_t<kAct == kActBf16, __nv_bfloat16, __half>;

LOWBIT_DEVICE float half_to_f32(uint32_t bits16, bool bf16) {
  return bf16 ? __uint_as_float(bits16 << 16) : __half2float(__ushort_as_half(static_cast<uint16_t>(bits16)));
}

LOWBIT_DEVICE void store_out(void* y, int64_t i, float v, int out_dtype) {
  if (out_dtype == kOutF32) {
    static_cast<float*>(y)[i] = v;
  } else if (out_dtype == kOutBf16) {
    static_cast<uint16_t*>(y)[i] = cuda::f32_to_bf16(v);
  } else {
    static_cast<uint16_t*>(y)[i] = cuda::f32_to_f16(v);
  }
}

LOWBIT_DEVICE float load_out(const void* b, int64_t i, int out_dtype) {
  if (out_dtype == kOutF32) return static_cast<const float*>(b)[i];
  const uint16_t h = static_cast<const uint16_t*>(b)[i];
  return out_dtype == kOutBf16 ? cuda::bf16_to_f32(h) : cuda::f16_to_f32(h);
}

// The constant A registers of step (pair, h) of the correction chain: -(c_R + z_sym) for the
// 4 registers R = 8 pair + 4 h + e, as two equal halves in the activation dtype.
// All compile-time constants once the loops are unrolled (mov-immediates, or registers the
// compiler keeps across items).
template <int kBits, int kAct>
LOWBIT_DEVICE void correction_a(int pair, int h, uint32_t (&a)[4]) {
  constexpr float kZeroSym = static_cast<float>(1 << (kBits - 1));
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float c = -(reg_offset(kBits, kAct == kActBf16, 8 * pair + 4 * h + e) + kZeroSym);
    if constexpr (kAct == kActBf16) {
      const __nv_bfloat162 v = __float2bfloat162_rn(c);  // exact: an integer < 2^8 in magnitude
      a[e] = *reinterpret_cast<const uint32_t*>(&v);
    } else {
      const __half2 v = __float2half2_rn(c);  // exact: an integer <= 2048 in magnitude
      a[e] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
}

}  // namespace detail

// kBits: 1..6, 8. kAct: GemvAct. kSlots: scale slots per chunk (8: group 32, 4: 64, 2: 128,
// 1: per-channel).
template <int kBits, int kAct, int kSlots>
__global__ void __launch_bounds__(kMaxThreads, 1) smxx_gemv_kernel(const __grid_constant__ GemvParams p) {
#if LOWBIT_HAS_SM80
  static_assert(layout_bits_supported(kBits), "gemv layout widths: 1, 2, 3, 4, 5, 6, 8");
  static_assert(kAct != kActI8 || int8_layout_bits_supported(kBits),
                "int8 activations take 4- and 8-bit weights");
  static_assert(kSlots == 1 || kSlots == 2 || kSlots == 4 || kSlots == 8, "slots: 1, 2, 4, 8");
  constexpr bool kInt8 = kAct == kActI8;
  constexpr int kPPG = kPairs / kSlots;  // pairs per group inside a chunk
  constexpr float kZeroSym = static_cast<float>(1 << (kBits - 1));  // symmetric zero point
  constexpr int kItemBytes = item_weight_bytes(kBits);               // weights of an item
  constexpr int kScaleBytes = item_scale_bytes(kSlots);              // its scale entries
  constexpr int kScaleEntries = kScaleBytes / 4;
  static_assert(kScaleBytes % 16 == 0 && kItemBytes % 16 == 0, "bulk / cp.async pieces are 16 bytes");

  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int g = lane >> 2;  // row pair (g, g+8) of A, batch row of B
  const int t = lane & 3;   // column group of A / B

  const int M = p.m, N = p.n, C = p.chunks, T = p.tiles;
  const int NW = p.warps, D = p.ring;
  const bool zeros = p.has_zeros != 0;
  const bool bulk = p.bulk != 0;

  // The block's tiles [t0, t0 + nt) (balanced: the counts differ by at most one), its L
  // items, and this warp's nj of them (items warp, warp + NW, ...).
  const int G = static_cast<int>(gridDim.x), blk = static_cast<int>(blockIdx.x);
  const int t0 = static_cast<int>(static_cast<int64_t>(blk) * T / G);
  const int nt = static_cast<int>(static_cast<int64_t>(blk + 1) * T / G) - t0;
  const int L = nt * C;
  const int nj = warp < L ? (L - 1 - warp) / NW + 1 : 0;

  // mbarriers: per warp `D` ring slots; kRedBufs "full" and kRedBufs "empty" of the
  // partial-sum buffers.
  const uint32_t bar0 = ptx::cvta_shared(smem + p.bar_offset);
  auto ring_bar = [&](int s) { return bar0 + 8u * static_cast<uint32_t>(warp * D + s); };
  auto red_full = [&](int i) { return bar0 + 8u * static_cast<uint32_t>(NW * D + i); };
  auto red_empty = [&](int i) { return bar0 + 8u * static_cast<uint32_t>(NW * D + kRedBufs + i); };
  unsigned char* ring = smem + p.ring_offset + warp * D * p.slot_bytes;
  const uint32_t ring_s = ptx::cvta_shared(ring);

  // 1. Barriers. A ring slot's phase completes when its copies landed: bulk: one
  //    arrive.expect_tx (lane 0) + the bytes; cp.async: one noinc arrival per lane.
  if (lane == 0) {
    for (int s = 0; s < D; ++s) ptx::mbarrier_init(ring_bar(s), bulk ? 1u : 32u);
    if (warp == 0) {
      for (int i = 0; i < kRedBufs; ++i) {
        ptx::mbarrier_init(red_full(i), static_cast<uint32_t>(NW * 32));
        ptx::mbarrier_init(red_empty(i), 32u);
      }
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  // Requests item j of this warp (global item t0 * C + warp + j * NW) into its slot s = j % D.
  // The slot's previous item has been read by every lane (the caller's __syncwarp()).
  auto issue = [&](int j, int s) {
    const int l = warp + j * NW;
    const int64_t item = static_cast<int64_t>(t0) * C + l;
    const uint32_t dst = ring_s + static_cast<uint32_t>(s * p.slot_bytes);
    const uint32_t bar = ring_bar(s);
    const unsigned char* wsrc = static_cast<const unsigned char*>(p.w) + item * kItemBytes;
    // Grouped entries of item (tile, chunk) are contiguous at item * slots * 8; per-channel
    // entries belong to the tile.
    const int64_t e0 = kSlots == 1 ? static_cast<int64_t>(t0 + l / C) * kEntriesPerSlot : item * kScaleEntries;
    const uint32_t* ssrc = p.scales + e0;
    const uint32_t* zsrc = zeros ? p.zeros + e0 : nullptr;
    if (bulk) {
      if (lane == 0) {
        ptx::mbarrier_arrive_expect_tx(bar, static_cast<uint32_t>(kItemBytes + (zeros ? 2 : 1) * kScaleBytes));
        ptx::cp_async_bulk_g2s(dst, wsrc, kItemBytes, bar);
        ptx::cp_async_bulk_g2s(dst + kItemBytes, ssrc, kScaleBytes, bar);
        if (zeros) ptx::cp_async_bulk_g2s(dst + kItemBytes + kScaleBytes, zsrc, kScaleBytes, bar);
      }
    } else {
#pragma unroll
      for (int s2 = 0; s2 < kBits; ++s2)
        ptx::cp_async_16(dst + s2 * kSliceBytes + lane * 16, wsrc + s2 * kSliceBytes + lane * 16);
      if (lane < kScaleBytes / 16) {
        ptx::cp_async_16(dst + kItemBytes + lane * 16, ssrc + lane * 4);
        if (zeros) ptx::cp_async_16(dst + kItemBytes + kScaleBytes + lane * 16, zsrc + lane * 4);
      }
      ptx::cp_async_mbarrier_arrive_noinc(bar);
    }
  };

  // 2. Before the wait: this warp's first D items; thread 0 asks L2 for the next
  //    l2_prefetch bytes of the block's weights (and their scales) and for a slice of the
  //    activations (L2 is the point of coherence: a prefetch never makes a later load stale).
  for (int j = 0; j < D && j < nj; ++j) issue(j, j);
  if (threadIdx.x == 0) {
    const int first = min(L, NW * D);
    const int64_t max_items = p.l2_prefetch / kItemBytes;
    const int cnt = static_cast<int>(min(static_cast<int64_t>(L - first), max_items));
    if (cnt > 0) {
      const int64_t item = static_cast<int64_t>(t0) * C + first;
      ptx::prefetch_bulk_l2(static_cast<const unsigned char*>(p.w) + item * kItemBytes,
                            static_cast<uint32_t>(cnt) * kItemBytes);
      if (kSlots > 1) {
        ptx::prefetch_bulk_l2(p.scales + item * kScaleEntries, static_cast<uint32_t>(cnt) * kScaleBytes);
        if (zeros) ptx::prefetch_bulk_l2(p.zeros + item * kScaleEntries, static_cast<uint32_t>(cnt) * kScaleBytes);
      }
    }
    const int64_t xbytes = static_cast<int64_t>(M) * p.k * (kInt8 ? 1 : 2);
    const int64_t slice = ((xbytes + G - 1) / G + 15) / 16 * 16;
    const int64_t x0 = slice * blk;
    if (x0 < xbytes)
      ptx::prefetch_bulk_l2(static_cast<const unsigned char*>(p.x) + x0, static_cast<uint32_t>(min(slice, xbytes - x0)));
  }
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();

  // 3. Stage the activations: rows 0..M-1, columns 0..chunks*256 (zero past k). int8 rows
  //    of 4-bit weights are stored in the column order of the int8 A registers.
  constexpr int kElemBytes = kInt8 ? 1 : 2;
  if (p.x_in_smem) {
    const int vec_row = C * kChunkK * kElemBytes / 16;  // 16-byte vectors per staged row
    const int vec_k = p.k * kElemBytes / 16;            // of which hold x
    const uint4* xg = static_cast<const uint4*>(p.x);
#pragma unroll 4
    for (int idx = threadIdx.x; idx < M * vec_row; idx += blockDim.x) {
      const int m = idx / vec_row, v = idx - m * vec_row;
      uint4 val = make_uint4(0, 0, 0, 0);
      if (v < vec_k) val = ptx::ld_nc_v4(xg + static_cast<int64_t>(m) * vec_k + v);
      if constexpr (kInt8 && kBits == 4) {
        val.x = ptx::prmt(val.x, 0, 0x3120u);  // columns (0, 2, 1, 3): int8_col_perm
        val.y = ptx::prmt(val.y, 0, 0x3120u);
        val.z = ptx::prmt(val.z, 0, 0x3120u);
        val.w = ptx::prmt(val.w, 0, 0x3120u);
      }
      *reinterpret_cast<uint4*>(smem + m * p.x_smem_stride + v * 16) = val;
    }
  }
  __syncthreads();

  // B operand of pair `pair` of chunk `chunk` for this lane (batch row g): 8 activations
  // (16 bytes f16/bf16, 8 bytes int8) of columns 256 chunk + 32 pair + 8 t. Batch rows
  // g >= M read row M - 1: those mma columns are never stored, so no predicate and no
  // zeroing. kXs: from the staged rows (an LDS). Else from x in global memory (L2); pairs
  // past k (k % 256 != 0) read the last pair inside k instead, whose products with the
  // zero-padded weights of those columns are 0 (k is a multiple of 32: a pair is wholly
  // inside or outside).
  const int xrow = min(g, M - 1);
  const unsigned char* xs_row = smem + xrow * p.x_smem_stride;
  const unsigned char* xg_row = static_cast<const unsigned char*>(p.x) + static_cast<int64_t>(xrow) * p.k * kElemBytes;
  auto load_b = [&](auto xs_tag, uint32_t (&b)[4], int chunk, int pair) {
    constexpr bool kXs = decltype(xs_tag)::value;
    int col;
    const unsigned char* row;
    if constexpr (kXs) {
      col = chunk * kChunkK + 32 * pair + 8 * t;
      row = xs_row;
    } else {
      const int last = (p.k - 1 - chunk * kChunkK) >> 5;  // last pair of the chunk inside k
      col = chunk * kChunkK + 32 * min(pair, last) + 8 * t;
      row = xg_row;
    }
    if constexpr (kInt8) {
      const uint2 v = *reinterpret_cast<const uint2*>(row + col);
      b[0] = v.x;
      b[1] = v.y;
      b[2] = b[3] = 0;
    } else {
      const uint4 v = *reinterpret_cast<const uint4*>(row + col * 2);
      b[0] = v.x;
      b[1] = v.y;
      b[2] = v.z;
      b[3] = v.w;
    }
  };

  // 4. The corrections of every chunk, once per block (they depend on the activations and
  //    the layout only): per (chunk, group) the lane's 4 values of cg = -sum (c_R + z_sym) x
  //    (f16/bf16) and, with stored zero points (and always for int8), cx = sum x. They do
  //    not depend on g: lanes t = 0..3 of row pair 0 write 16 floats per table entry, every
  //    lane reads its t's 4 with one 16-byte load. Warp w computes chunks w, w + NW, ...
  float* corr_tab = reinterpret_cast<float*>(smem + p.corr_offset);
  float* cx_tab = reinterpret_cast<float*>(smem + p.cx_offset);
  auto corrections = [&](auto xs_tag) {
    for (int chunk = warp; chunk < C; chunk += NW) {
#pragma unroll
      for (int gi = 0; gi < kSlots; ++gi) {
        uint32_t b[kPPG][4];
#pragma unroll
        for (int pp = 0; pp < kPPG; ++pp) load_b(xs_tag, b[pp], chunk, gi * kPPG + pp);
        float4 vg = make_float4(0.f, 0.f, 0.f, 0.f), vx = make_float4(0.f, 0.f, 0.f, 0.f);
        if constexpr (kInt8) {
          int32_t cx[4] = {0, 0, 0, 0};
          const uint32_t ones[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
#pragma unroll
          for (int pp = 0; pp < kPPG; ++pp) {
            const uint32_t bb[2] = {b[pp][0], b[pp][1]};
            ptx::mma_m16n8k32_u8s8(cx, ones, bb);
          }
          vx = make_float4(__int_as_float(cx[0]), __int_as_float(cx[1]), __int_as_float(cx[2]), __int_as_float(cx[3]));
        } else {
          using T = detail::ActT<kAct>;
          constexpr bool kBf16 = kAct == kActBf16;
          float cg[4] = {0.f, 0.f, 0.f, 0.f}, cx[4] = {0.f, 0.f, 0.f, 0.f};
          const uint32_t one2 = kBf16 ? 0x3F803F80u : 0x3C003C00u;
          const uint32_t ones[4] = {one2, one2, one2, one2};
#pragma unroll
          for (int pp = 0; pp < kPPG; ++pp) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const uint32_t bb[2] = {b[pp][2 * h], b[pp][2 * h + 1]};
              uint32_t ac[4];
              detail::correction_a<kBits, kAct>(gi * kPPG + pp, h, ac);
              ptx::mma_m16n8k16<T>(cg, ac, bb);
              if (zeros) ptx::mma_m16n8k16<T>(cx, ones, bb);
            }
          }
          vg = make_float4(cg[0], cg[1], cg[2], cg[3]);
          vx = make_float4(cx[0], cx[1], cx[2], cx[3]);
        }
        if (g == 0) {
          const int e = (chunk * kSlots + gi) * 4 + t;
          if constexpr (!kInt8) reinterpret_cast<float4*>(corr_tab)[e] = vg;
          if (kInt8 || zeros) reinterpret_cast<float4*>(cx_tab)[e] = vx;
        }
      }
    }
  };
  if (p.x_in_smem) {
    corrections(std::true_type{});
  } else {
    corrections(std::false_type{});
  }
  __syncthreads();

  const bool sbf16 = p.scale_bf16 != 0;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};

  // 5. One item from ring slot s: every group of the chunk. Each group's steps alternate
  //    between two accumulators (h = 0, 1): two independent mma chains.
  auto compute = [&](auto xs_tag, int s, int chunk) {
    const unsigned char* slot = ring + s * p.slot_bytes;
    uint32_t w[4 * kBits];
#pragma unroll
    for (int s2 = 0; s2 < kBits; ++s2) {
      const uint4 v = *reinterpret_cast<const uint4*>(slot + s2 * kSliceBytes + lane * 16);
      w[4 * s2 + 0] = v.x;
      w[4 * s2 + 1] = v.y;
      w[4 * s2 + 2] = v.z;
      w[4 * s2 + 3] = v.w;
    }
    const uint32_t* sent = reinterpret_cast<const uint32_t*>(slot + kItemBytes);  // [slot][g]
    const uint32_t* zent = sent + kScaleEntries;
#pragma unroll
    for (int gi = 0; gi < kSlots; ++gi) {
      uint32_t b[kPPG][4];
#pragma unroll
      for (int pp = 0; pp < kPPG; ++pp) load_b(xs_tag, b[pp], chunk, gi * kPPG + pp);
      const int e = (chunk * kSlots + gi) * 4 + t;
      const float4 vx = (kInt8 || zeros) ? reinterpret_cast<const float4*>(cx_tab)[e] : make_float4(0.f, 0.f, 0.f, 0.f);
      const uint32_t se = sent[gi * kEntriesPerSlot + g];
      const float slo = detail::half_to_f32(se & 0xFFFFu, sbf16);
      const float shi = detail::half_to_f32(se >> 16, sbf16);

      if constexpr (kInt8) {
        const int32_t cx[4] = {__float_as_int(vx.x), __float_as_int(vx.y), __float_as_int(vx.z), __float_as_int(vx.w)};
        int32_t cq[4] = {0, 0, 0, 0};
#pragma unroll
        for (int pp = 0; pp < kPPG; ++pp) {
          uint32_t a[4];
          int8_pair<kBits>(w, gi * kPPG + pp, a);
          const uint32_t bb[2] = {b[pp][0], b[pp][1]};
          ptx::mma_m16n8k32_u8s8(cq, a, bb);
        }
        int izl = static_cast<int>(kZeroSym), izh = izl;
        if (zeros) {
          const uint32_t ze = zent[gi * kEntriesPerSlot + g];
          izl = __float2int_rn(detail::half_to_f32(ze & 0xFFFFu, sbf16));
          izh = __float2int_rn(detail::half_to_f32(ze >> 16, sbf16));
        }
        acc[0] += slo * static_cast<float>(cq[0] - izl * cx[0]);
        acc[1] += slo * static_cast<float>(cq[1] - izl * cx[1]);
        acc[2] += shi * static_cast<float>(cq[2] - izh * cx[2]);
        acc[3] += shi * static_cast<float>(cq[3] - izh * cx[3]);
      } else {
        using T = detail::ActT<kAct>;
        constexpr bool kBf16 = kAct == kActBf16;
        const float4 vg = reinterpret_cast<const float4*>(corr_tab)[e];
        // The first chain starts from the correction: it ends at
        // sum (c + q) x - sum (c + z_sym) x = sum (q - z_sym) x.
        float cd[2][4] = {{vg.x, vg.y, vg.z, vg.w}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
        for (int pp = 0; pp < kPPG; ++pp) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t bb[2] = {b[pp][2 * h], b[pp][2 * h + 1]};
            const int r0 = 8 * (gi * kPPG + pp) + 4 * h;
            const uint32_t a[4] = {raw_reg<kBits, kBf16>(w, r0 + 0), raw_reg<kBits, kBf16>(w, r0 + 1),
                                   raw_reg<kBits, kBf16>(w, r0 + 2), raw_reg<kBits, kBf16>(w, r0 + 3)};
            ptx::mma_m16n8k16<T>(cd[h], a, bb);
          }
        }
        float ct[4] = {cd[0][0] + cd[1][0], cd[0][1] + cd[1][1], cd[0][2] + cd[1][2], cd[0][3] + cd[1][3]};
        if (zeros) {
          const uint32_t ze = zent[gi * kEntriesPerSlot + g];
          const float dlo = kZeroSym - detail::half_to_f32(ze & 0xFFFFu, sbf16);
          const float dhi = kZeroSym - detail::half_to_f32(ze >> 16, sbf16);
          ct[0] += dlo * vx.x;
          ct[1] += dlo * vx.y;
          ct[2] += dhi * vx.z;
          ct[3] += dhi * vx.w;
        }
        acc[0] += slo * ct[0];
        acc[1] += slo * ct[1];
        acc[2] += shi * ct[2];
        acc[3] += shi * ct[3];
      }
    }
  };

  // 6. Partial sums of tile lt: buffer lt % kRedBufs, layout [warp][m][row]. The writer of
  //    the buffer's k-th use (k = lt / kRedBufs) first waits for the summing of its
  //    (k-1)-th use. Phases cannot run two ahead of a waiter: a buffer's next "full" phase
  //    needs every warp past the "empty" wait that follows the summing of this one, and the
  //    next "empty" phase needs that "full" phase. The summing of the earliest unsummed
  //    tile never waits on a later one, so the scheme cannot deadlock.
  float* part = reinterpret_cast<float*>(smem + p.part_offset);
  auto flush = [&](int lt) {
    const int bi = lt % kRedBufs, k = lt / kRedBufs;
    if (k > 0) ptx::mbarrier_wait_parity(red_empty(bi), static_cast<uint32_t>((k - 1) & 1));
    float* pw = part + ((bi * NW + warp) * M) * kTileRows;
    const int m0 = 2 * t;
    if (m0 < M) {
      pw[m0 * kTileRows + g] = acc[0];
      pw[m0 * kTileRows + g + 8] = acc[2];
    }
    if (m0 + 1 < M) {
      pw[(m0 + 1) * kTileRows + g] = acc[1];
      pw[(m0 + 1) * kTileRows + g + 8] = acc[3];
    }
    acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
    ptx::mbarrier_arrive(red_full(bi));
  };
  // Warp lt % NW sums tile lt in warp order, adds the bias, scales (int8) and stores.
  auto reduce = [&](int lt) {
    const int bi = lt % kRedBufs, k = lt / kRedBufs;
    ptx::mbarrier_wait_parity(red_full(bi), static_cast<uint32_t>(k & 1));
    const float* pb = part + bi * NW * M * kTileRows;
#pragma unroll 1
    for (int o = lane; o < M * kTileRows; o += 32) {
      const int m = o / kTileRows, r = o - m * kTileRows;
      const int n = (t0 + lt) * kTileRows + r;
      float sum = 0.0f;
#pragma unroll 4
      for (int w = 0; w < NW; ++w) sum += pb[(w * M + m) * kTileRows + r];
      if (n < N) {
        if constexpr (kInt8) sum *= p.x_scales[m];
        if (p.has_bias) sum += detail::load_out(p.bias, n, p.out_dtype);
        detail::store_out(p.y, static_cast<int64_t>(m) * N + n, sum, p.out_dtype);
      }
    }
    ptx::mbarrier_arrive(red_empty(bi));
  };

  // 7. The item stream: per tile, this warp's items of it (possibly none), then its part.
  //    Item j sits in slot s = j % D, waited on with the parity of its use (j / D) & 1; once
  //    every lane has read it (__syncwarp), the slot is refilled with item j + D. The reads
  //    are LDS whose values the mma / FFMA above have consumed before the warp converges,
  //    so they complete before the copy engine (bulk) can write the slot; no proxy fence is
  //    needed for this write-after-read (as in the usual TMA consumer-release pattern).
  auto stream = [&](auto xs_tag) {
    int j = 0, s = 0;
    uint32_t phase = 0;
    int l = warp;  // block item of item j
#pragma unroll 1
    for (int lt = 0; lt < nt; ++lt) {
      const int l_begin = lt * C, l_end = l_begin + C;
#pragma unroll 1
      while (j < nj && l < l_end) {
        ptx::mbarrier_wait_parity(ring_bar(s), phase);
        compute(xs_tag, s, l - l_begin);
        __syncwarp();
        if (j + D < nj) issue(j + D, s);
        ++j;
        l += NW;
        if (++s == D) {
          s = 0;
          phase ^= 1u;
        }
      }
      flush(lt);
      if (lt > 0 && (lt - 1) % NW == warp) reduce(lt - 1);
    }
    if (nt > 0 && (nt - 1) % NW == warp) reduce(nt - 1);
  };
  if (p.x_in_smem) {
    stream(std::true_type{});
  } else {
    stream(std::false_type{});
  }
#else
  LOWBIT_DEVICE_TRAP("smxx_gemv needs sm_80 or newer");
#endif
}

}  // namespace lowbit::gemv
