// The low-bit GEMV for decode: y[m, n] = x[m, k] * dequant(W)[n, k]^T (+ bias), m = 1..8,
// 1..8-bit weights in the gemv layout (smxx_gemv_layout.hpp), f16 / bf16 activations
// through mma.m16n8k16 or int8 activations through mma.m16n8k32, fp32 (int32) accumulation.
// Design and measurements: docs/kernels/gemv.md.
//
// Work decomposition. A unit is up to kTR tiles of 16 rows (tiles_per_unit at run time).
// Units are spread over the grid (unit = blockIdx.x + i * gridDim.x), so the grid is sized
// for the GPU, not for n. The warps of a block split the k chunks in contiguous ranges and
// each warp streams (unit, chunk) items through its own ring of `stages` shared-memory slots
// filled by cp.async (bits x 16 bytes per tile per lane: one coalesced 512-byte request per
// warp and slice; the item's scale / zero entries as 16-byte pieces), so stages - 1 items
// are in flight while one is computed, without holding them in registers. At the end of a
// unit the warps' partial sums meet in shared memory, one barrier, and the block writes
// the outputs.
//
// Arithmetic (per group of 32 / 64 / 128 columns, or per chunk for per-channel weights):
// the weights enter the mma as c_R + q (one lop3 per two codes, smxx_gemv_layout.hpp); each
// tile's chain starts from cg = -sum (c_R + z_sym) x, computed once per block for the
// warp's chunks (one mma per step on constant A) and kept in shared memory; with stored zero
// points + (z_sym - z) sum x. So the chain ends at sum (q - z) x (exact products, fp32
// accumulation) and acc += s * chain. The activations are the mma's B operand (n = 8: the
// batch), so m = 2..8 costs the same instruction stream as m = 1.
//
// The activations are staged once per block in shared memory (row stride padded so the
// B loads of a quarter warp hit distinct banks), or read from L2 when m * k is too large.
//
// Before sm_90's griddepcontrol.wait (PDL), the block only asks L2 for its first unit's
// weights; every other read (weights included) and every write comes after the wait.
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
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_global_nc.cuh"
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

// cp.async.wait_group with a run-time count (the ring depth is a launch parameter): the
// instruction takes an immediate, so one case per supported depth.
LOWBIT_DEVICE void cp_async_wait_pending(int pending) {
  switch (pending) {
    case 0: ptx::cp_async_wait<0>(); break;
    case 1: ptx::cp_async_wait<1>(); break;
    case 2: ptx::cp_async_wait<2>(); break;
    case 3: ptx::cp_async_wait<3>(); break;
    case 4: ptx::cp_async_wait<4>(); break;
    case 5: ptx::cp_async_wait<5>(); break;
    default: ptx::cp_async_wait<6>(); break;
  }
}

// kBits: 1..6, 8. kAct: GemvAct. kSlots: scale slots per chunk (8: group 32, 4: 64, 2: 128,
// 1: per-channel).
template <int kBits, int kAct, int kSlots>
__global__ void __launch_bounds__(kMaxThreads, min_blocks_per_sm(kBits, kSlots))
    smxx_gemv_kernel(const __grid_constant__ GemvParams p) {
#if LOWBIT_HAS_SM80
  static_assert(layout_bits_supported(kBits), "gemv layout widths: 1, 2, 3, 4, 5, 6, 8");
  static_assert(kAct != kActI8 || int8_layout_bits_supported(kBits),
                "int8 activations take 4- and 8-bit weights");
  static_assert(kSlots == 1 || kSlots == 2 || kSlots == 4 || kSlots == 8, "slots: 1, 2, 4, 8");
  constexpr bool kInt8 = kAct == kActI8;
  constexpr int kTR = max_tiles_per_unit(kBits);
  constexpr int kPPG = kPairs / kSlots;  // pairs per group inside a chunk
  constexpr float kZeroSym = static_cast<float>(1 << (kBits - 1));  // symmetric zero point
  constexpr int kWordBytes = kTR * kBits * kSliceBytes;             // weights of an item
  constexpr int kPieces = kSlots * 2;  // 16-byte pieces of a tile's scale entries per chunk
  constexpr int kSlotBytes = ring_slot_bytes(kBits, kSlots);

  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nwarps = blockDim.x >> 5;
  const int g = lane >> 2;  // row pair (g, g+8) of A, batch row of B
  const int t = lane & 3;   // column group of A / B

  const int M = p.m, N = p.n, C = p.chunks, T = p.tiles;
  const int tpu = p.tiles_per_unit, cpw = p.chunks_per_warp, stages = p.stages;
  const int rows_u = tpu * kTileRows;
  const int c_begin = warp * cpw;
  const int units_blk =
      static_cast<int>(blockIdx.x) < p.units ? (p.units - 1 - static_cast<int>(blockIdx.x)) / gridDim.x + 1 : 0;
  const int n_items = units_blk * cpw;  // the same for every warp of the block
  const uint4* wsrc = static_cast<const uint4*>(p.w);
  const bool zeros = p.has_zeros != 0;
  unsigned char* ring = smem + p.ring_offset + warp * stages * kSlotBytes;

  // 1. Ask L2 for this block's first unit (weights and scales) before waiting for the
  //    previous kernel; one thread, one bulk prefetch each.
  if (threadIdx.x == 0 && units_blk > 0) {
    const int tile0 = static_cast<int>(blockIdx.x) * tpu;
    const int ntiles = min(tpu, T - tile0);
    ptx::prefetch_bulk_l2(wsrc + static_cast<int64_t>(tile0) * C * kBits * kLanes,
                          static_cast<uint32_t>(ntiles) * C * kBits * kSliceBytes);
    ptx::prefetch_bulk_l2(p.scales + tile0 * p.scale_tile_stride,
                          static_cast<uint32_t>(ntiles * p.scale_tile_stride * 4));
  }
  ptx::griddep_wait();
  ptx::griddep_launch_dependents();

  // 2. Stage the activations: rows 0..M-1, columns 0..chunks*256 (zero past k), cp.async
  //    (one group, committed first). int8 rows of 4-bit weights go through registers to
  //    be stored in the column order of the int8 A registers.
  constexpr int kElemBytes = kInt8 ? 1 : 2;
  if (p.x_in_smem) {
    const int vec_row = C * kChunkK * kElemBytes / 16;  // 16-byte vectors per staged row
    const int vec_k = p.k * kElemBytes / 16;            // of which hold x
    const uint4* xg = static_cast<const uint4*>(p.x);
    for (int idx = threadIdx.x; idx < M * vec_row; idx += blockDim.x) {
      const int m = idx / vec_row, v = idx - m * vec_row;
      unsigned char* dst = smem + m * p.x_smem_stride + v * 16;
      if constexpr (kInt8 && kBits == 4) {
        uint4 val = make_uint4(0, 0, 0, 0);
        if (v < vec_k) val = ptx::ld_nc_v4(xg + static_cast<int64_t>(m) * vec_k + v);
        val.x = ptx::prmt(val.x, 0, 0x3120u);  // columns (0, 2, 1, 3): int8_col_perm
        val.y = ptx::prmt(val.y, 0, 0x3120u);
        val.z = ptx::prmt(val.z, 0, 0x3120u);
        val.w = ptx::prmt(val.w, 0, 0x3120u);
        *reinterpret_cast<uint4*>(dst) = val;
      } else {
        const bool in = v < vec_k;
        ptx::cp_async_16_zfill(ptx::cvta_shared(dst), xg + (in ? static_cast<int64_t>(m) * vec_k + v : 0),
                               in ? 16u : 0u);
      }
    }
  }
  ptx::cp_async_commit();

  // 3. The item ring. Items are walked in order by a cursor (unit index, chunk offset);
  //    item i lives in slot i % stages. One cp.async group per item and thread (possibly
  //    empty), so "item i has landed" is wait_group(stages - 1) after its successors'.
  struct Cursor {
    int ui = 0;  // unit index of this block (unit = blockIdx.x + ui * gridDim.x)
    int co = 0;  // chunk offset inside the warp's range
    int i = 0;   // item index
  };
  auto advance = [&](Cursor& c) {
    ++c.i;
    if (++c.co == cpw) {
      c.co = 0;
      ++c.ui;
    }
  };
  auto issue_item = [&](const Cursor& c) {
    const int chunk = c_begin + c.co;
    if (c.i < n_items && chunk < C) {  // warp-uniform
      const int unit = static_cast<int>(blockIdx.x) + c.ui * static_cast<int>(gridDim.x);
      unsigned char* slot = ring + (c.i % stages) * kSlotBytes;
      const uint32_t slot_s = ptx::cvta_shared(slot);
#pragma unroll
      for (int tt = 0; tt < kTR; ++tt) {
        const int tile = unit * tpu + tt;
        if (tt < tpu && tile < T) {
          const uint4* src = wsrc + (static_cast<int64_t>(tile) * C + chunk) * (kBits * kLanes) + lane;
#pragma unroll
          for (int s = 0; s < kBits; ++s)
            ptx::cp_async_16(slot_s + (tt * kBits + s) * kSliceBytes + lane * 16, src + s * kLanes);
        }
      }
      // Scale (and zero) entries of the item's tiles: kPieces 16-byte pieces per tile,
      // contiguous in memory; lane -> (tile, piece).
#pragma unroll
      for (int pc = lane; pc < kTR * kPieces; pc += kLanes) {
        const int tt = pc / kPieces, piece = pc % kPieces;
        const int tile = unit * tpu + tt;
        if (tt < tpu && tile < T) {
          const int64_t e0 = tile * p.scale_tile_stride + static_cast<int64_t>(chunk) * p.scale_chunk_stride;
          const int off = kWordBytes + (tt * kPieces + piece) * 16;
          ptx::cp_async_16(slot_s + off, p.scales + e0 + piece * 4);
          if (zeros) ptx::cp_async_16(slot_s + off + kTR * kPieces * 16, p.zeros + e0 + piece * 4);
        }
      }
    }
    ptx::cp_async_commit();
  };

  Cursor lc;  // next item to issue
  for (int j = 0; j < stages; ++j) {
    issue_item(lc);
    advance(lc);
  }
  cp_async_wait_pending(stages);  // the activations (the oldest group) have landed
  __syncthreads();

  // B operand of pair `pair` of chunk `chunk` for this lane (batch row g): 8 activations
  // (16 bytes f16/bf16, 8 bytes int8) of columns 256 chunk + 32 pair + 8 t. One generic
  // predicated load from the staged rows (shared memory) or from x itself (int8 is always
  // staged: the host requires it).
  const unsigned char* xb_row =
      p.x_in_smem ? smem + g * p.x_smem_stride
                  : static_cast<const unsigned char*>(p.x) + static_cast<int64_t>(g) * p.k * kElemBytes;
  const int xb_limit = p.x_in_smem ? C * kChunkK : p.k;
  const bool xb_ok = g < M;
  auto load_b = [&](uint32_t (&b)[4], int chunk, int pair) {
    const int col = chunk * kChunkK + 32 * pair + 8 * t;
    const bool ok = xb_ok && col < xb_limit;
    if constexpr (kInt8) {
      uint2 v = make_uint2(0, 0);
      if (ok) v = *reinterpret_cast<const uint2*>(xb_row + col);
      b[0] = v.x;
      b[1] = v.y;
      b[2] = b[3] = 0;
    } else {
      uint4 v = make_uint4(0, 0, 0, 0);
      if (ok) v = *reinterpret_cast<const uint4*>(xb_row + col * 2);
      b[0] = v.x;
      b[1] = v.y;
      b[2] = v.z;
      b[3] = v.w;
    }
  };

  // 4. The corrections of this warp's chunks, once per block (they depend on the
  //    activations and the layout only, not on the rows): per (chunk, group) the lane's 4
  //    values of cg = -sum (c_R + z_sym) x (f16/bf16) and, with stored zero points (and
  //    always for int8), cx = sum x. They do not depend on g: lanes t = 0..3 of row pair 0
  //    write 16 floats per table entry, every lane reads its t's 4 with one 16-byte load.
  float* corr_tab = reinterpret_cast<float*>(smem + p.corr_offset);
  float* cx_tab = reinterpret_cast<float*>(smem + p.cx_offset);
  for (int co = 0; co < cpw; ++co) {
    const int chunk = c_begin + co;
    if (chunk >= C) break;
#pragma unroll
    for (int gi = 0; gi < kSlots; ++gi) {
      uint32_t b[kPPG][4];
#pragma unroll
      for (int pp = 0; pp < kPPG; ++pp) load_b(b[pp], chunk, gi * kPPG + pp);
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
  __syncwarp();

  const bool sbf16 = p.scale_bf16 != 0;
  float acc[kTR][4];
#pragma unroll
  for (int tt = 0; tt < kTR; ++tt) acc[tt][0] = acc[tt][1] = acc[tt][2] = acc[tt][3] = 0.0f;

  // 5. One item from its ring slot: every group of the chunk, the first kNT tiles of the
  //    unit (kNT = the run-time tiles_per_unit, dispatched below so no tile is computed in
  //    vain). With one tile, the steps alternate between two accumulators (h = 0, 1): two
  //    independent mma chains instead of one.
  auto compute = [&](const Cursor& c, auto nt_tag) {
    constexpr int kNT = decltype(nt_tag)::value;
    const int chunk = c_begin + c.co;
    if (chunk >= C) return;  // this warp's range ends early (warp-uniform)
    const unsigned char* slot = ring + (c.i % stages) * kSlotBytes;
    uint32_t w[kNT][4 * kBits];
#pragma unroll
    for (int tt = 0; tt < kNT; ++tt)
#pragma unroll
      for (int s = 0; s < kBits; ++s) {
        const uint4 v = *reinterpret_cast<const uint4*>(slot + (tt * kBits + s) * kSliceBytes + lane * 16);
        w[tt][4 * s + 0] = v.x;
        w[tt][4 * s + 1] = v.y;
        w[tt][4 * s + 2] = v.z;
        w[tt][4 * s + 3] = v.w;
      }
    const uint32_t* sent = reinterpret_cast<const uint32_t*>(slot + kWordBytes);  // [tile][slot][g]
    const uint32_t* zent = sent + kTR * kPieces * 4;
#pragma unroll
    for (int gi = 0; gi < kSlots; ++gi) {
      uint32_t b[kPPG][4];
#pragma unroll
      for (int pp = 0; pp < kPPG; ++pp) load_b(b[pp], chunk, gi * kPPG + pp);
      const int e = (chunk * kSlots + gi) * 4 + t;
      const float4 vx = (kInt8 || zeros) ? reinterpret_cast<const float4*>(cx_tab)[e] : make_float4(0.f, 0.f, 0.f, 0.f);

      if constexpr (kInt8) {
        const int32_t cx[4] = {__float_as_int(vx.x), __float_as_int(vx.y), __float_as_int(vx.z), __float_as_int(vx.w)};
#pragma unroll
        for (int tt = 0; tt < kNT; ++tt) {
          int32_t cq[4] = {0, 0, 0, 0};
#pragma unroll
          for (int pp = 0; pp < kPPG; ++pp) {
            uint32_t a[4];
            int8_pair<kBits>(w[tt], gi * kPPG + pp, a);
            const uint32_t bb[2] = {b[pp][0], b[pp][1]};
            ptx::mma_m16n8k32_u8s8(cq, a, bb);
          }
          const uint32_t se = sent[(tt * kSlots + gi) * kEntriesPerSlot + g];
          int izl = static_cast<int>(kZeroSym), izh = izl;
          if (zeros) {
            const uint32_t ze = zent[(tt * kSlots + gi) * kEntriesPerSlot + g];
            izl = __float2int_rn(detail::half_to_f32(ze & 0xFFFFu, sbf16));
            izh = __float2int_rn(detail::half_to_f32(ze >> 16, sbf16));
          }
          const float slo = detail::half_to_f32(se & 0xFFFFu, sbf16);
          const float shi = detail::half_to_f32(se >> 16, sbf16);
          acc[tt][0] += slo * static_cast<float>(cq[0] - izl * cx[0]);
          acc[tt][1] += slo * static_cast<float>(cq[1] - izl * cx[1]);
          acc[tt][2] += shi * static_cast<float>(cq[2] - izh * cx[2]);
          acc[tt][3] += shi * static_cast<float>(cq[3] - izh * cx[3]);
        }
      } else {
        using T = detail::ActT<kAct>;
        constexpr bool kBf16 = kAct == kActBf16;
        constexpr int kAccs = kNT == 1 ? 2 : 1;
        const float4 vg = reinterpret_cast<const float4*>(corr_tab)[e];
        // The first chain of each tile starts from the correction: it ends at
        // sum (c + q) x - sum (c + z_sym) x = sum (q - z_sym) x.
        float cd[kNT][kAccs][4];
#pragma unroll
        for (int tt = 0; tt < kNT; ++tt) {
          cd[tt][0][0] = vg.x, cd[tt][0][1] = vg.y, cd[tt][0][2] = vg.z, cd[tt][0][3] = vg.w;
          if constexpr (kAccs == 2) cd[tt][1][0] = cd[tt][1][1] = cd[tt][1][2] = cd[tt][1][3] = 0.0f;
        }
#pragma unroll
        for (int pp = 0; pp < kPPG; ++pp) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t bb[2] = {b[pp][2 * h], b[pp][2 * h + 1]};
            const int r0 = 8 * (gi * kPPG + pp) + 4 * h;
#pragma unroll
            for (int tt = 0; tt < kNT; ++tt) {
              const uint32_t a[4] = {raw_reg<kBits, kBf16>(w[tt], r0 + 0), raw_reg<kBits, kBf16>(w[tt], r0 + 1),
                                     raw_reg<kBits, kBf16>(w[tt], r0 + 2), raw_reg<kBits, kBf16>(w[tt], r0 + 3)};
              ptx::mma_m16n8k16<T>(cd[tt][kAccs == 2 ? h : 0], a, bb);
            }
          }
        }
#pragma unroll
        for (int tt = 0; tt < kNT; ++tt) {
          float ct[4] = {cd[tt][0][0], cd[tt][0][1], cd[tt][0][2], cd[tt][0][3]};
          if constexpr (kAccs == 2) {
            ct[0] += cd[tt][1][0];
            ct[1] += cd[tt][1][1];
            ct[2] += cd[tt][1][2];
            ct[3] += cd[tt][1][3];
          }
          if (zeros) {
            const uint32_t ze = zent[(tt * kSlots + gi) * kEntriesPerSlot + g];
            const float dlo = kZeroSym - detail::half_to_f32(ze & 0xFFFFu, sbf16);
            const float dhi = kZeroSym - detail::half_to_f32(ze >> 16, sbf16);
            ct[0] += dlo * vx.x;
            ct[1] += dlo * vx.y;
            ct[2] += dhi * vx.z;
            ct[3] += dhi * vx.w;
          }
          const uint32_t se = sent[(tt * kSlots + gi) * kEntriesPerSlot + g];
          const float slo = detail::half_to_f32(se & 0xFFFFu, sbf16);
          const float shi = detail::half_to_f32(se >> 16, sbf16);
          acc[tt][0] += slo * ct[0];
          acc[tt][1] += slo * ct[1];
          acc[tt][2] += shi * ct[2];
          acc[tt][3] += shi * ct[3];
        }
      }
    }
  };
  // tiles_per_unit is 1, 2 or kTR (the host's choice; any other value runs the kTR path,
  // which is correct, only wasteful).
  auto compute_item = [&](const Cursor& c) {
    if constexpr (kTR == 1) {
      compute(c, std::integral_constant<int, 1>{});
    } else {
      if (tpu > 2) {
        compute(c, std::integral_constant<int, kTR>{});
      } else if (tpu == 2) {
        compute(c, std::integral_constant<int, 2>{});
      } else {
        compute(c, std::integral_constant<int, 1>{});
      }
    }
  };

  // 6. End of a unit (the warp's last chunk of it): partial sums of every warp meet in
  //    shared memory, layout [warp][m][row], double-buffered by unit parity, so one barrier
  //    per unit suffices; then one thread per output sums the warps and stores.
  auto finish_unit = [&](const Cursor& c) {
    if (c.co != cpw - 1) return;
    const int unit = static_cast<int>(blockIdx.x) + c.ui * static_cast<int>(gridDim.x);
    float* part = reinterpret_cast<float*>(smem + p.part_offset) + (c.ui & 1) * (nwarps * M * rows_u);
#pragma unroll
    for (int tt = 0; tt < kTR; ++tt) {
      if (tt < tpu) {
        const int r0 = tt * kTileRows + g;
        const int m0 = 2 * t;
        if (m0 < M) {
          part[(warp * M + m0) * rows_u + r0] = acc[tt][0];
          part[(warp * M + m0) * rows_u + r0 + 8] = acc[tt][2];
        }
        if (m0 + 1 < M) {
          part[(warp * M + m0 + 1) * rows_u + r0] = acc[tt][1];
          part[(warp * M + m0 + 1) * rows_u + r0 + 8] = acc[tt][3];
        }
      }
      acc[tt][0] = acc[tt][1] = acc[tt][2] = acc[tt][3] = 0.0f;
    }
    __syncthreads();
    const int outs = M * rows_u;
#pragma unroll 1
    for (int o = threadIdx.x; o < outs; o += blockDim.x) {
      const int m = o / rows_u, r = o - m * rows_u;
      const int n = unit * rows_u + r;
      if (n >= N) continue;
      float sum = 0.0f;
#pragma unroll 1
      for (int w = 0; w < nwarps; ++w) sum += part[(w * M + m) * rows_u + r];
      if constexpr (kInt8) sum *= p.x_scales[m];
      if (p.has_bias) sum += detail::load_out(p.bias, n, p.out_dtype);
      detail::store_out(p.y, static_cast<int64_t>(m) * N + n, sum, p.out_dtype);
    }
  };

  // 7. The item stream: wait for item i (stages - 1 younger groups may stay in flight),
  //    compute it, refill its slot with item i + stages.
  Cursor cc;  // item being computed
#pragma unroll 1
  while (cc.i < n_items) {
    cp_async_wait_pending(stages - 1);
    __syncwarp();  // the scale pieces other lanes copied are visible
    compute_item(cc);
    __syncwarp();  // every lane has read the slot before it is refilled
    issue_item(lc);
    advance(lc);
    finish_unit(cc);
    advance(cc);
  }
  ptx::cp_async_wait<0>();
#else
  LOWBIT_DEVICE_TRAP("smxx_gemv needs sm_80 or newer");
#endif
}

}  // namespace lowbit::gemv
