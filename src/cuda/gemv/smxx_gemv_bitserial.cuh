// The bit-serial GEMV: y[m, n] = x[m, k] * dequant(W)[n, k]^T (+ bias) for 1- and 2-bit weights
// of the gemv layout (smxx_gemv_layout.hpp) on the single-bit tensor-core mma (mma_b1.cuh), with
// no decode of the weights. Design and measurements: docs/kernels/gemv.md, "Bit-serial".
//
// Arithmetic. A per-call kernel (bitserial_xplanes_kernel) rounds each 128-column block of a row
// of x to a 16-bit two's-complement fixed point value, x = sx * xi with sx = max |x| / 32767
// (|x - sx xi| <= sx / 2), and cuts xi in 16 bit planes, xi = sum_p w_p bit_p(xi) with
// w_p = 2^p (p < 15) and w_15 = -2^15. For a weight bit plane Q_j (j < bits) the mma's AND +
// popcount gives, exactly, c[j][p] = sum_k Q_j[k] bit_p(xi[k]) for 16 rows x 8 planes at once,
// so sum_k q[k] xi[k] = sum_j 2^j sum_p w_p c[j][p]: integers, no weight is ever converted to a
// float. Per group (or 128-column block, per-channel) and row, in fp32:
//   acc += s * sx * (sum_k q xi - z * sum_k xi)   (= s * sum_k (q - z) x up to x's rounding)
// The layout's words hold rows g and g+8 in alternate registers (1-bit: even / odd bits; 2-bit:
// nibble positions 0-1 / 2-3); the A operands are the word masked to one row (and one weight
// bit), and the activation planes repeat each column's bit at every position of that column
// (2 positions for 1-bit, 4 for 2-bit), so half (1-bit) or a quarter (2-bit) of each mma's k
// is used. The tensor work is still small (docs: ~2 us of the 1-bit Suite-1 call on an H200).
//
// C fragment: lane (g, t) holds planes 2t, 2t+1 of n-tile 0 and 8+2t, 9+2t of n-tile 1 for
// rows g and g+8. It combines them with the weights 2^(2t) * {1, 2, 256, +-512} in int32
// (the common factor 2^(2t) is applied once per tile, in fp32), and the four lanes t are summed
// with two shuffles at the end of a tile (fixed order: deterministic). The zero-point term
// z * sum xi is subtracted by lane t = 0 alone.
//
// One batch row (m = 1; from m = 2 the decoding kernel is faster, measured).
//
// Work decomposition: as the main GEMV (smxx_gemv.cuh, v6): a block owns a balanced range of
// 16-row tiles and its `warps` warps split k by chunks (warp w: chunks w, w + warps, ...);
// each warp streams its items (tile, chunk) through a register ring of kU items with 16-byte
// ld.global.nc loads (the first kU before griddepcontrol.wait, with PDL overlapping the
// activation kernel, and the others prefetched into L2 then); partial sums per tile go to
// shared memory (two buffers), summed per phase of tiles in warp order after one barrier.
//
// PDL contract (as smxx_gemv.cuh): weights, scales and zero points are read before
// griddepcontrol.wait; the activation planes (written by the kernel before this one), bias and
// output after it. The activation kernel writes its workspace only after its own wait, so a
// next call's activation kernel never overwrites planes this kernel still reads.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/gemv/smxx_gemv_bitserial_params.hpp"
#include "cuda/gemv/smxx_gemv_io.cuh"
#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_global_nc.cuh"
#include "cuda/ptx/mma_b1.cuh"
#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::gemv {

namespace bitserial {

// Items a warp has in flight (registers): ~2 KB of weights per warp either way. Four 1-bit
// items (80 registers in all: three blocks of 8 warps per SM) measured faster than two (64
// registers, four blocks): H200, Suite 1 w1 g128 f16 at m = 1, 29.1 against 31.7 us (session 16).
LOWBIT_HD constexpr int ring_items(int bits) { return bits == 1 ? 4 : 2; }

}  // namespace bitserial

// One block per (chunk, word w of a lane's item), one warp per lane index t (4
// warps): the warp finds the maximum of the 128-column block holding the word's columns, rounds
// the 32 values of its bit positions (columns repeat) and writes the 16 plane words of (w, t)
// with one ballot each. The warps with t = 0 of a block's first word also write the block's
// scale and the segment sums. Short and wide: the GEMV waits for this kernel (PDL), so its
// latency is on every call's path (a first version with one block per chunk and one warp
// doing the quantization cost 3-5 us per call on an H200).
template <int kBits>
__global__ void __launch_bounds__(128) bitserial_xplanes_kernel(const __grid_constant__ BitserialParams p) {
  constexpr int kWords = 4 * kBits;
  constexpr int kWordCols = 64 / kBits;
  const int c = blockIdx.x / kWords, w = blockIdx.x % kWords;
  const int t = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t rec = c;
  const int blk = (w * kWordCols) / kXBlock;  // the 128-column block of this word (0 or 1)
  const uint16_t* xrow = static_cast<const uint16_t*>(p.x);
  const bool bf16 = p.x_bf16 != 0;
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();  // x is the previous kernel's output; that kernel may read the workspace
  // The block's maximum: lane l reads columns 4l .. 4l + 3 of it (k is a multiple of 32).
  const int b0 = c * kChunkK + blk * kXBlock + 4 * lane;
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (b0 < p.k) {
    const uint2 raw = *reinterpret_cast<const uint2*>(xrow + b0);
    v[0] = detail::half_to_f32(raw.x & 0xFFFFu, bf16);
    v[1] = detail::half_to_f32(raw.x >> 16, bf16);
    v[2] = detail::half_to_f32(raw.y & 0xFFFFu, bf16);
    v[3] = detail::half_to_f32(raw.y >> 16, bf16);
  }
  float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
  const float inv = amax > 0.0f ? 32767.0f / amax : 0.0f;
  auto fix = [&](float x) { return max(-32767, min(32767, __float2int_rn(x * inv))); };
  // This lane's bit position: its column's value, rounded.
  const int col = c * kChunkK + bitserial::column_of(kBits, w, t, lane);
  const int32_t xi = col < p.k ? fix(detail::half_to_f32(xrow[col], bf16)) : 0;
  uint32_t keep = 0;
#pragma unroll
  for (int pl = 0; pl < kXPlanes; ++pl) {
    const uint32_t bal = __ballot_sync(0xFFFFFFFFu, (xi >> pl) & 1);
    if (lane == pl) keep = bal;
  }
  if (lane < kXPlanes) p.planes[(rec * 32 + (lane & 7) * 4 + t) * (8 * kBits) + w * 2 + (lane >> 3)] = keep;
  // Scale and segment sums of the block, once: by warp t = 0 of the block's first word.
  if (t == 0 && (w * kWordCols) % kXBlock == 0) {
    int32_t s8 = fix(v[0]) + fix(v[1]) + fix(v[2]) + fix(v[3]);
    s8 += __shfl_xor_sync(0xFFFFFFFFu, s8, 1);
    s8 += __shfl_xor_sync(0xFFFFFFFFu, s8, 2);
    s8 += __shfl_xor_sync(0xFFFFFFFFu, s8, 4);  // 32 columns: lanes 8j .. 8j + 7
    const int32_t s16 = s8 + __shfl_xor_sync(0xFFFFFFFFu, s8, 8);
    const int32_t s32 = s16 + __shfl_xor_sync(0xFFFFFFFFu, s16, 16);
    const int G = p.seg_cols;
    if (G == 32 && (lane & 7) == 0) p.xsum[rec * kXSegMax + blk * 4 + (lane >> 3)] = s8;
    if (G == 64 && (lane & 15) == 0) p.xsum[rec * kXSegMax + blk * 2 + (lane >> 4)] = s16;
    if (G == 128 && lane == 0) p.xsum[rec * kXSegMax + blk] = s32;
    if (blk == 0 && lane >= kChunkK / G && lane < kXSegMax) p.xsum[rec * kXSegMax + lane] = 0;  // unused entries
    if (lane == 0) p.xscale[rec * 2 + blk] = amax * (1.0f / 32767.0f);
  }
}

// kSlots: 256 / group, or 1 for per-channel scales. One batch row (m = 1): at m >= 2 the
// decoding kernel is faster (docs/kernels/gemv.md, "Bit-serial").
template <int kBits, int kSlots>
__global__ void __launch_bounds__(kBsMaxWarps * 32, 1) bitserial_gemv_kernel(const __grid_constant__ BitserialParams p) {
  constexpr int kWords = 4 * kBits;                // 32-bit words of a lane's item
  constexpr bool kPerChannel = kSlots == 1;
  constexpr int kSegs = kPerChannel ? 2 : kSlots;  // segments per chunk
  constexpr int kSegCols = kChunkK / kSegs;
  constexpr int kWordCols = 64 / kBits;            // columns a word covers (four lanes)
  constexpr int kU = bitserial::ring_items(kBits);
  constexpr int kPhase = kBsPhaseTiles;
  __shared__ float part[kBsPartFloats];

  // warp: broadcast from lane 0 so that ptxas knows it is warp-uniform (uniform registers; as
  // in smxx_gemv.cuh, docs/kernels/gemv.md v24).
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x >> 5), 0);
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int S = p.warps, C = p.chunks;
  // The block's nt tiles t0 + i tstep (balanced): with p.tile_interleave bid, bid + G, ... of
  // the G blocks, else a contiguous range (as smxx_gemv.cuh; docs/kernels/gemv.md v16).
  const int G = static_cast<int>(gridDim.x);
  const int base_tiles = p.tiles / G, extra = p.tiles % G;
  const int bid = static_cast<int>(blockIdx.x);
  const bool inter = p.tile_interleave != 0;
  const int tstep = inter ? G : 1;
  const int t0 = inter ? bid : bid * base_tiles + min(bid, extra);
  const int nt = inter ? (p.tiles - 1 - bid) / G + 1 : base_tiles + (bid < extra ? 1 : 0);
  const int mc = (C - 1 - warp) / S + 1;  // chunks of this warp per tile (S <= C: every warp has one)
  const int L = nt * mc;
  const bool zeros = p.has_zeros != 0, sbf = p.scale_bf16 != 0;

  struct Item {
    uint32_t w[kWords];
    uint32_t s[kSlots];
    uint32_t z[kSlots];
  };
  // Item (tile t0 + tl tstep, chunk warp + ci * S): weights, then its scale / zero entries.
  auto load = [&](Item& it, int tl, int ci) {
    const int64_t item = static_cast<int64_t>(t0 + tl * tstep) * C + warp + ci * S;
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(p.w) +
                                                      item * (kBits * kSliceBytes)) + lane;
#pragma unroll
    for (int s = 0; s < kBits; ++s) {
      const uint4 v = ptx::ld_nc_na_v4(src + s * (kSliceBytes / 16));
      it.w[4 * s] = v.x;
      it.w[4 * s + 1] = v.y;
      it.w[4 * s + 2] = v.z;
      it.w[4 * s + 3] = v.w;
    }
    const int64_t e0 = kPerChannel ? static_cast<int64_t>(t0 + tl * tstep) * 8 + g : item * kSlots * 8 + g;
#pragma unroll
    for (int sl = 0; sl < kSlots; ++sl) {
      it.s[sl] = ptx::ld_nc_u32(p.scales + e0 + sl * 8);
      it.z[sl] = zeros ? ptx::ld_nc_u32(p.zeros + e0 + sl * 8) : 0u;
    }
  };
  // The activation side of a chunk: this lane's plane words, the segment sums, the block scales
  // (L1 / L2 reads: every block reads them).
  struct Act {
    uint32_t b[kWords][2];
    int32_t xs[kSegs > 4 ? 8 : 4];
    float sx[2];
  };
  auto load_act = [&](Act& a, int chunk) {
    const uint4* pb = reinterpret_cast<const uint4*>(p.planes + (static_cast<int64_t>(chunk) * 32 + lane) * (kWords * 2));
#pragma unroll
    for (int q = 0; q < kWords / 2; ++q) {
      const uint4 v = ptx::ld_nc_v4(pb + q);
      a.b[2 * q][0] = v.x;
      a.b[2 * q][1] = v.y;
      a.b[2 * q + 1][0] = v.z;
      a.b[2 * q + 1][1] = v.w;
    }
    const uint4* px = reinterpret_cast<const uint4*>(p.xsum + static_cast<int64_t>(chunk) * kXSegMax);
#pragma unroll
    for (int q = 0; q < (kSegs > 4 ? 2 : 1); ++q) {
      const uint4 v = ptx::ld_nc_v4(px + q);
      a.xs[4 * q] = static_cast<int32_t>(v.x);
      a.xs[4 * q + 1] = static_cast<int32_t>(v.y);
      a.xs[4 * q + 2] = static_cast<int32_t>(v.z);
      a.xs[4 * q + 3] = static_cast<int32_t>(v.w);
    }
    const uint2 r = ptx::ld_nc_v2(reinterpret_cast<const uint2*>(p.xscale + static_cast<int64_t>(chunk) * 2));
    a.sx[0] = __uint_as_float(r.x);
    a.sx[1] = __uint_as_float(r.y);
  };
  // Cursors (tile, chunk index) of the next item to load and to compute: no division per item.
  int ld_tl = 0, ld_ci = 0, cp_tl = 0, cp_ci = 0;
  auto advance = [&](int& tl, int& ci) {
    if (++ci == mc) {
      ci = 0;
      ++tl;
    }
  };

  float acc[2] = {0.0f, 0.0f};
  const int m5 = t == 3 ? -512 : 512;  // plane 15 (lane t = 3, n-tile 1, odd column) is the sign
  const float zsym = static_cast<float>(1 << (kBits - 1));

  auto compute = [&](const Item& it, const Act& a) {
#pragma unroll
    for (int seg = 0; seg < kSegs; ++seg) {
      int32_t cc[kBits][2][4];
#pragma unroll
      for (int j = 0; j < kBits; ++j)
#pragma unroll
        for (int T = 0; T < 2; ++T)
#pragma unroll
          for (int e = 0; e < 4; ++e) cc[j][T][e] = 0;
      if constexpr (kSegCols >= kWordCols) {
#pragma unroll
        for (int ww = 0; ww < kSegCols / kWordCols; ++ww) {
          const int w = seg * (kSegCols / kWordCols) + ww;
#pragma unroll
          for (int j = 0; j < kBits; ++j) {
            const uint32_t a0 = it.w[w] & bitserial::row_mask(kBits, 0, j);
            const uint32_t a1 = it.w[w] & bitserial::row_mask(kBits, 1, j);
            ptx::mma_m16n8k128_b1_and(cc[j][0], a0, a1, a.b[w][0]);
            ptx::mma_m16n8k128_b1_and(cc[j][1], a0, a1, a.b[w][1]);
          }
        }
      } else {
        // 1-bit, groups of 32: a word holds two groups (pair 2w in bits 0-7 / 16-23, pair
        // 2w + 1 in bits 8-15 / 24-31).
        static_assert(kBits == 1 && kSegCols == 32, "only 1-bit words hold two groups");
        const int w = seg >> 1;
        const uint32_t hm = (seg & 1) ? 0xFF00FF00u : 0x00FF00FFu;
        const uint32_t a0 = it.w[w] & 0x55555555u & hm;
        const uint32_t a1 = it.w[w] & 0xAAAAAAAAu & hm;
        ptx::mma_m16n8k128_b1_and(cc[0][0], a0, a1, a.b[w][0]);
        ptx::mma_m16n8k128_b1_and(cc[0][1], a0, a1, a.b[w][1]);
      }
      int32_t ce[2][4];
#pragma unroll
      for (int T = 0; T < 2; ++T)
#pragma unroll
        for (int e = 0; e < 4; ++e) ce[T][e] = kBits == 1 ? cc[0][T][e] : cc[0][T][e] + 2 * cc[kBits - 1][T][e];
      const int32_t vg = ce[0][0] + 2 * ce[0][1] + 256 * ce[1][0] + m5 * ce[1][1];
      const int32_t vh = ce[0][2] + 2 * ce[0][3] + 256 * ce[1][2] + m5 * ce[1][3];
      const int sl = kPerChannel ? 0 : seg;
      float zg = zsym, zh = zsym;
      if (zeros) {
        zg = detail::half_to_f32(it.z[sl] & 0xFFFFu, sbf);
        zh = detail::half_to_f32(it.z[sl] >> 16, sbf);
      }
      const float X = t == 0 ? static_cast<float>(a.xs[seg]) : 0.0f;
      const float ug = fmaf(-zg, X, static_cast<float>(vg));
      const float uh = fmaf(-zh, X, static_cast<float>(vh));
      const float sx = a.sx[(seg * kSegCols) / kXBlock];
      if constexpr (kPerChannel) {
        acc[0] = fmaf(sx, ug, acc[0]);
        acc[1] = fmaf(sx, uh, acc[1]);
      } else {
        acc[0] = fmaf(detail::half_to_f32(it.s[sl] & 0xFFFFu, sbf) * sx, ug, acc[0]);
        acc[1] = fmaf(detail::half_to_f32(it.s[sl] >> 16, sbf) * sx, uh, acc[1]);
      }
    }
  };

  // End of tile tl: lane sums, per-channel scale, the warp's partial into the buffer of its
  // phase (phases of kPhase tiles, two buffers by phase parity). Returns whether the tile ends
  // a phase (or the block's tiles).
  auto tile_end = [&](int tl, const Item& it) {
    const float lane_factor = static_cast<float>(1 << (2 * t));
    const int slot = tl % kPhase;
    float* buf_part = part + ((tl / kPhase) & 1) * (kPhase * kBsMaxWarps * 16);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float v = acc[r] * lane_factor;
      v += __shfl_xor_sync(0xFFFFFFFFu, v, 1);
      v += __shfl_xor_sync(0xFFFFFFFFu, v, 2);
      if constexpr (kPerChannel) v *= detail::half_to_f32(r == 0 ? (it.s[0] & 0xFFFFu) : (it.s[0] >> 16), sbf);
      if (t == 0) buf_part[(slot * S + warp) * 16 + g + 8 * r] = v;
      acc[r] = 0.0f;
    }
    return slot == kPhase - 1 || tl == nt - 1;
  };
  // The phase ending at tile tl: after the block's barrier, its outputs summed in warp order
  // (fixed: deterministic), bias added, stored. Called from ONE place (the end of an iteration
  // of the item loop) so that every warp meets the barrier at the same instruction; warps reach
  // a phase end in different iterations (their chunk counts differ), and a warp may write the
  // next phase's partials before the others arrive: hence two buffers. A buffer is written
  // again two phases later, after the next phase's barrier, which every thread reaches only
  // once it has summed this one.
  auto phase_end = [&](int tl) {
    __syncthreads();
    const int slot = tl % kPhase, first = tl - slot, count = (slot + 1) * 16;
    const float* buf_part = part + ((tl / kPhase) & 1) * (kPhase * kBsMaxWarps * 16);
    for (int idx = static_cast<int>(threadIdx.x); idx < count; idx += static_cast<int>(blockDim.x)) {
      const int ts = idx >> 4, row = idx & 15;
      float sum = 0.0f;
      for (int w = 0; w < S; ++w) sum += buf_part[(ts * S + w) * 16 + row];
      const int n = (t0 + (first + ts) * tstep) * 16 + row;
      if (n < p.n) {
        if (p.has_bias) sum += detail::load_out(p.bias, n, p.out_dtype);
        detail::store_out(p.y, n, sum, p.out_dtype);
      }
    }
  };

  Item buf[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u)
    if (u < L) {
      load(buf[u], ld_tl, ld_ci);
      advance(ld_tl, ld_ci);
    }
  // The warp's other items into L2 while the activation kernel runs (one prefetch per
  // 128-byte line): after the wait their loads are L2 hits.
  {
    int tl = ld_tl, ci = ld_ci;
    for (int i = kU; i < L; ++i) {
      if ((lane & 7) == 0) {
        const int64_t item = static_cast<int64_t>(t0 + tl * tstep) * C + warp + ci * S;
        const unsigned char* a = static_cast<const unsigned char*>(p.w) + item * (kBits * kSliceBytes) + 16 * lane;
#pragma unroll
        for (int s = 0; s < kBits; ++s) ptx::prefetch_l2(a + s * kSliceBytes);
      }
      advance(tl, ci);
    }
  }
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();

  // A phase spans at least kPhase items of a warp (>= kU), so an iteration of kU items ends at
  // most one phase.
  static_assert(kU <= kPhase, "at most one phase end per iteration");
  for (int i0 = 0; i0 < L; i0 += kU) {
    int ended = -1;  // the tile ending a phase in this iteration
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = i0 + u;
      if (i < L) {
        Act act;
        load_act(act, warp + cp_ci * S);
        compute(buf[u], act);
        if (cp_ci == mc - 1 && tile_end(cp_tl, buf[u])) ended = cp_tl;
        advance(cp_tl, cp_ci);
        if (i + kU < L) {
          load(buf[u], ld_tl, ld_ci);
          advance(ld_tl, ld_ci);
        }
      }
    }
    if (ended >= 0) phase_end(ended);
  }
}

}  // namespace lowbit::gemv
