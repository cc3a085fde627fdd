// The low-bit GEMV for decode: y[m, n] = x[m, k] * dequant(W)[n, k]^T (+ bias), m = 1..8,
// 1..8-bit weights in the gemv layout (smxx_gemv_layout.hpp), f16 / bf16 activations
// through mma.m16n8k16 or int8 activations through mma.m16n8k32, fp32 (int32) accumulation.
// Design and measurements: docs/kernels/gemv.md (v6).
//
// Work decomposition (v6, "k-split warps"). A block of `warps` warps owns a balanced share
// of the 16-row tiles (v16: tiles b, b + G, ... of the G blocks; clusters: a contiguous
// range [t0, t0 + nt)); its warps split k: warp w takes chunks
// w, w + warps, ... (S of them) of every tile, so a warp's items are (tile, chunk) for the
// block's tiles in order, S per tile. The grid is sized so that one block per SM does the
// call and a block of the NEXT call (PDL) fits beside it:
//   * each warp has a private ring of ring_depth(bits) slots in shared memory, one item each
//     (weights + scale / zero entries), filled with 16-byte cp.async by its own lanes:
//     completion is per thread (cp.async.wait_group), so a warp never waits on another;
//   * half of every warp's ring is requested BEFORE griddepcontrol.wait (with PDL it streams
//     while the previous kernel finishes), the other half after the activations (v14);
//   * after the wait each warp computes the corrections of its S chunks (below) into its
//     own table (no block barrier), then loops wait item -> compute -> refill the slot;
//   * activations are read per item from global memory through L1 (ld.global.nc: every
//     tile of the block reads the same x, so after the first tile they are L1 hits);
//   * after a tile's S items each warp writes its fp32 partial (m x 16) to the current
//     phase buffer (P = phase_tiles tiles; two buffers); one __syncthreads per phase,
//     then the block sums the phase's outputs, one per thread, each in warp order (fixed:
//     deterministic), adds bias / x scale and stores. A buffer is written again two phases
//     later, after the next barrier, which every thread only reaches once it has summed.
//   * on sm_90 a launch may group ksplit blocks in a cluster that splits k further (v11,
//     p.ksplit): the cluster's blocks own the same tiles, its warps take the chunks in turn,
//     the phase barrier is the cluster's, and the phase sums read every block's partial sums
//     through distributed shared memory (below). For long k at large m, where one block
//     cannot stage its share of the activations once.
//
// Arithmetic (per group of 32 / 64 / 128 columns, or per chunk for per-channel weights):
// the weights enter the mma as c_R + q (one lop3 per two codes, smxx_gemv_layout.hpp); each
// chain starts from cg = -sum (c_R + z_sym) x, computed once per (warp, chunk, group) from
// the same B operands and constant A registers, kept in the warp's table; with stored zero
// points + (z_sym - z) sum x. So the chain ends at sum (q - z) x (exact products, fp32
// accumulation) and acc += s * chain. The activations are the mma's B operand (n = 8: the
// batch), so m = 2..8 costs the same instruction stream as m = 1.
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
#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/gemv/smxx_gemv_io.cuh"
#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/ptx/cluster.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_global_nc.cuh"
#include "cuda/ptx/ld_shared.cuh"
#include "cuda/ptx/ldmatrix.cuh"
#include "cuda/ptx/mma.cuh"
#include "cuda/ptx/mma_int8.cuh"
#include "cuda/ptx/prmt.cuh"
#include "cuda/ptx/smxx_config.hpp"
#include "cuda/ptx/st_shared.cuh"

namespace lowbit::gemv {

namespace detail {

template <int kAct>
using ActT = std::conditional_t<kAct == kActBf16, __nv_bfloat16, __half>;

// The item loop's zero-point mode (compute() in the kernel): known at compile time, or read
// from the parameters.
inline constexpr int kZerosNo = 0;
inline constexpr int kZerosYes = 1;
inline constexpr int kZerosRuntime = 2;

// The tiled layout (kLayoutTiled) decoded with the mixed GEMMs' raw decoders
// (smxx_tiled_layout.hpp): every register holds c + q with one offset c per width and
// dtype, except f16 4-bit rows g+8 (A registers 1 and 3), whose nibbles stay at bits 4..7:
// c + 16 q. The kernel folds that factor f = 16 into those rows' scale (s / 16, exact).
template <int kBits, int kAct>
LOWBIT_HD constexpr float tiled_offset() {
  return kAct == kActBf16 ? (kBits == 4 ? 128.0f : -128.0f) : 1024.0f;
}
template <int kBits, int kAct>
LOWBIT_HD constexpr float tiled_hi_factor() {
  return kBits == 4 && kAct == kActF16 ? 16.0f : 1.0f;
}

// The A registers of k16 step st (0..15) of an item in the tiled layout. `w` holds the lane's
// 4 kBits words, word 4 s + i = word i of tiled chunk s of the item: 4-bit, word j of a chunk
// is its step j, so step st is word st; 8-bit, words 2 j, 2 j + 1 of a chunk are its step j,
// so step st is words 2 st, 2 st + 1. The registers are the mma's A fragment as they are.
template <int kBits, int kAct>
LOWBIT_DEVICE void tiled_step(const uint32_t* w, int st, uint32_t (&a)[4]) {
  if constexpr (kBits == 4) {
    if constexpr (kAct == kActBf16) {
      tiled::raw_w4_bf16(w[st], a);
    } else {
      tiled::raw_w4_f16(w[st], a);
    }
  } else {
    const uint32_t lo = w[2 * st], hi = w[2 * st + 1];
    if constexpr (kAct == kActBf16) {
      // q does not fit a bf16 mantissa above a power of two, so the register is q - 128 (c =
      // -128) as m - s of tiled::raw_w8_bf16_split (m = 128 + (q & 127), s = 256 - 128 (q >> 7),
      // every term an integer below 2^9: exact), the subtraction as fma(s, -1, m) (bf16x2 fma
      // is sm_80; sub needs sm_90). 3 operations per register (the gemv layout's q-exact
      // decode takes 5). Bytes 0 / 2 of a word are row g, bytes 1 / 3 row g + 8.
      uint32_t m[2], sb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        tiled::raw_w8_bf16_split(i == 0 ? lo : hi, m, sb);
#pragma unroll
        for (int r = 0; r < 2; ++r)
          asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(a[2 * i + r]) : "r"(sb[r]), "r"(0xBF80BF80u), "r"(m[r]));
      }
    } else {
      tiled::raw_w8_f16(lo, hi, a);
    }
  }
}

// The constant A registers of step (pair, h) of the correction chain: -(c_R + z_sym) for the
// 4 registers R = 8 pair + 4 h + e, as two equal halves in the activation dtype (tiled
// layout: -(c + f z_sym), f the register's row factor).
// All compile-time constants once the loops are unrolled (mov-immediates, or registers the
// compiler keeps across items).
template <int kBits, int kAct, int kLayout>
LOWBIT_DEVICE void correction_a(int pair, int h, uint32_t (&a)[4]) {
  constexpr float kZeroSym = static_cast<float>(1 << (kBits - 1));
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float c = kLayout == kLayoutTiled
                        ? -(tiled_offset<kBits, kAct>() + ((e & 1) ? tiled_hi_factor<kBits, kAct>() : 1.0f) * kZeroSym)
                        : -(reg_offset(kBits, kAct == kActBf16, 8 * pair + 4 * h + e) + kZeroSym);
    if constexpr (kAct == kActBf16) {
      const __nv_bfloat162 v = __float2bfloat162_rn(c);  // exact: an integer < 2^8 in magnitude
      a[e] = *reinterpret_cast<const uint32_t*>(&v);
    } else {
      const __half2 v = __float2half2_rn(c);  // exact: an integer <= 2048 in magnitude
      a[e] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
}

// Act-order weights whose groups are not all group_size columns long (the packer cut each
// group into runs of group_size and padded the last run with zero columns: k' = index[0] > k;
// GPTQ never writes such a g_idx, every group there has exactly group_size columns). The launch
// and its shares were planned for k columns, so the kernel leaves its pipeline: every warp of
// the grid takes output channels in turn and sums them straight from the tiled layout of k'
// columns, one code per lane and step, in fp32: (q - z) s x[perm[j]]. Correct for any g_idx
// and about an order of magnitude slower than the pipeline (docs/kernels/gemv.md, "Act-order").
// After griddepcontrol.wait (it reads the activations).
template <int kBits, int kAct, int kSlots>
LOWBIT_DEVICE void act_order_direct(const GemvParams& p, int kp) {
  const int lane = threadIdx.x & 31;
  const int gw = static_cast<int>(blockIdx.x) * static_cast<int>(blockDim.x >> 5) + static_cast<int>(threadIdx.x >> 5);
  const int nw = static_cast<int>(gridDim.x) * static_cast<int>(blockDim.x >> 5);
  const int group = kChunkK / kSlots;  // act-order weights have a group (kSlots > 1)
  const int32_t* perm = p.act_index + tiled::kActOrderHeader;
  const bool sbf16 = p.scale_bf16 != 0;
  const uint16_t* sc = reinterpret_cast<const uint16_t*>(p.scales);
  const uint8_t* zp = reinterpret_cast<const uint8_t*>(p.zeros);
  const unsigned char* w = static_cast<const unsigned char*>(p.w);
  const uint16_t* x = static_cast<const uint16_t*>(p.x);
  for (int c = gw; c < p.n; c += nw) {
    const int strip = c / 16, r16 = c % 16;
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int j = lane; j < kp; j += 32) {
      const int src = perm[j];
      if (src < 0 || src >= p.k) continue;  // a padding column (weight exactly 0), or a corrupt value
      int kc, ln, word, shift;
      if constexpr (kBits == 4) {  // tiled::w4_code_pos inverted
        const int kk = j % 64, c16 = kk % 16, rem = c16 % 8;
        kc = j / 64;
        word = kk / 16;
        ln = (r16 % 8) * 4 + rem / 2;
        shift = 4 * ((r16 / 8) | ((c16 / 8) << 1) | ((rem % 2) << 2));
      } else {  // tiled::w8_code_pos inverted
        const int kk = j % 32, c16 = kk % 16, rem = c16 % 8;
        kc = j / 32;
        word = 2 * (kk / 16) + c16 / 8;
        ln = (r16 % 8) * 4 + rem / 2;
        shift = 8 * ((r16 / 8) | ((rem % 2) << 1));
      }
      const uint32_t wd = *reinterpret_cast<const uint32_t*>(w + tiled::chunk_offset(kBits, kp, strip, kc, ln) + 4 * word);
      const int q = static_cast<int>((wd >> shift) & ((1u << kBits) - 1u));
      const int64_t si = tiled::scale_index(p.n, j / group, c);
      const int z = p.has_zeros ? static_cast<int>(zp[si]) : (1 << (kBits - 1));
      const float v = static_cast<float>(q - z) * half_to_f32(sc[si], sbf16);
#pragma unroll
      for (int r = 0; r < 8; ++r)
        if (r < p.m) acc[r] += v * half_to_f32(x[static_cast<int64_t>(r) * p.k + src], kAct == kActBf16);
    }
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      if (r >= p.m) break;
      float sum = acc[r];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, off);
      if (lane == 0) {
        if (p.has_bias) sum += load_out(p.bias, c, p.out_dtype);
        store_out(p.y, static_cast<int64_t>(r) * p.n + c, sum, p.out_dtype);
      }
    }
  }
}

}  // namespace detail
// kBits: 1..6, 8. kAct: GemvAct. kSlots: scale slots per chunk (8: group 32, 4: 64, 2: 128,
// 1: per-channel). kLayout: GemvLayout. kStageX (tiled layout only): the activations go
// through the warp's shared buffer (m > kTiledDirectMaxM), else straight from global memory.
//
// The tiled layout (kLayoutTiled, 4- and 8-bit, f16 / bf16 activations) is read in place:
// its (16-row strip, 256 columns) block is 4 (4-bit) or 8 (8-bit) consecutive 512-byte
// chunks of the strip, lane L's 16 bytes of each at 16 L, i.e. an item of the same shape
// as the gemv layout's (bits slices of 512 bytes) at strip * 2 k bits + chunk * bits * 512
// bytes; a partial last item (k % 256 != 0) copies only the chunks inside k. Its lane
// registers hold the standard mma fragment (columns 16 st + 2 t + {0, 1, 8, 9} of step st),
// so a lane's activations are 4-byte pieces 16 bytes apart, not one 16-byte row: the warp
// stages its chunks' m x 256 activations in its own shared buffer (16-byte loads, rows
// XOR-swizzled by 16-byte unit; all of its chunks once per call when they fit (p.x_once),
// else the item's chunk per item) and reads the B operand with ldmatrix.x4 (one per pair of
// steps), as the mixed GEMMs do, or (kStageX false, m <= 2) loads the 32-bit pairs straight
// from global memory; the correction tables, computed once, read the staged buffer when the
// chunks are staged once, else 32-bit pairs from global memory. (32-bit loads per item at
// every m: at m = 8 each touches 8 rows, and the L1 wavefronts doubled the Suite-1 time;
// docs/kernels/gemv.md.) Scales: (groups, n) in the
// activation dtype, rows in pair order (16 strip + 2 r + h = row r + 8 h), so a group's
// 32-bit entries (g, g+8) of a strip are 32 contiguous bytes, copied like the gemv layout's; integer zero points: u8 in the same order, 16 bytes per
// group and strip. Groups past k (partial last item) are zero-filled.
//
// kPermuted (tiled, staged, grouped): act-order weights; the staging places x[:, perm]
// (docs/kernels/gemv.md, "Act-order"). Separate instantiations, so that the other kernels'
// code is unchanged.
//
// kCluster: the launch groups p.ksplit blocks in a cluster that splits k (sm_90, v11). A
// template parameter so that the kernels without it compile as before the split existed (with
// a run-time cluster size in every kernel, the m = 1 Suite-1 sums were 0.4-0.9 us slower on
// the H200, same machine: W4 g128 f16 43.5 / 43.6 against 42.7 / 42.7, W8 per-channel 62.4 /
// 62.4 against 61.9 / 62.0).
namespace detail {

template <int kBits, int kAct, int kSlots, int kLayout, bool kStageX, bool kCluster, bool kPermuted, bool kRounds>
LOWBIT_DEVICE void gemv_body(const GemvParams& p) {
  static_assert(layout_bits_supported(kBits), "gemv layout widths: 1, 2, 3, 4, 5, 6, 8");
  static_assert(kAct != kActI8 || int8_layout_bits_supported(kBits),
                "int8 activations take 4- and 8-bit weights");
  constexpr bool kTiled = kLayout == kLayoutTiled;
  static_assert(!kTiled || ((kBits == 4 || kBits == 8) && kAct != kActI8),
                "the tiled layout holds 4- and 8-bit weights for f16 / bf16 activations");
  static_assert(kTiled || !kStageX, "only the tiled layout stages the activations");
  static_assert(!kPermuted || (kTiled && kStageX && kSlots > 1 && kAct != kActI8),
                "act-order weights: tiled layout, activations staged, grouped scales");
  static_assert(!kRounds || kPermuted, "the gather in rounds is act-order's");
  static_assert(kSlots == 1 || kSlots == 2 || kSlots == 4 || kSlots == 8, "slots: 1, 2, 4, 8");
  constexpr bool kInt8 = kAct == kActI8;
  constexpr int kPPG = kPairs / kSlots;  // pairs per group inside a chunk
  constexpr float kZeroSym = static_cast<float>(1 << (kBits - 1));  // symmetric zero point
  constexpr int kItemBytes = item_weight_bytes(kBits);               // weights of an item
  constexpr int kScaleBytes = item_scale_bytes(kSlots);              // its scale entries
  constexpr int kScaleEntries = kScaleBytes / 4;
  constexpr int kDepth = ring_depth(kBits);
  constexpr int kElemBytes = kInt8 ? 1 : 2;
  static_assert(kScaleBytes % 16 == 0 && kItemBytes % 16 == 0, "cp.async pieces are 16 bytes");
  static_assert(2 * kSlots <= 16, "scale pieces: lanes 0..15, zero pieces: lanes 16..31");

  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31;
  // The warp index broadcast from lane 0: the value is the same, but ptxas now knows it is
  // uniform across the warp and keeps it and what derives from it (this warp's chunks, its ring
  // and tables, the cursor's restart) in uniform registers, outside the 128-register budget.
  // With threadIdx.x >> 5 it rematerialized them from S2R in every ring refill, and 33 of the
  // 112 kernels spilled (8-48 bytes; now 9, all with groups of 32 or 64, 8-16 bytes).
  // Session 32 (docs/kernels/gemv.md v24), H200, Suite-1 m = 1 sums: W4 g128 f16 38.7 -> 37.4 us.
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x >> 5), 0);
  const int g = lane >> 2;  // row pair (g, g+8) of A, batch row of B
  const int t = lane & 3;   // column group of A / B

  const int M = p.m, N = p.n, C = p.chunks, KS = p.warps;
  const bool zeros = p.has_zeros != 0;

  // k-split across a cluster (p.ksplit = KB > 1, sm_90; session 17): the KB blocks of a
  // cluster own the same tiles and split k between their KS x KB warps, warp w of cluster
  // rank r being the cluster's warp vw = r KS + w; each block keeps its own warps' partial
  // sums, and the phase reduction reads every block's through distributed shared memory.
  // So each block stages 1 / KB of the activations: long k at m up to 8 still fits (Suite
  // 1's down, k = 14336, m = 8: 229 KB of activations, more than one SM holds).
  const int KB = kCluster ? p.ksplit : 1;
  const int crank = kCluster ? static_cast<int>(ptx::cluster_ctarank()) : 0;
  const int KST = KS * KB;        // the k-split of the cluster (<= C)
  const int vw = crank * KS + warp;  // this warp's place in it

  // The cluster's (block's) nt tiles t0 + i tstep, i < nt (balanced: counts differ by at most
  // one): with p.tile_interleave blk, blk + G, ... of the G clusters (blocks), so that at any
  // moment the grid streams neighbouring tiles and neighbouring pieces of the scale and
  // zero-point rows (v16; docs/kernels/gemv.md), else a contiguous range. This warp's S chunks
  // (vw, vw + KST, ...; KST <= C so S >= 1) and its L = nt * S items, item i = (tile
  // number) * S + j for chunk vw + j * KST.
  // The counts come as the host's quotients and remainders (p.tiles_q ..., gemv_work_split()):
  // (T - 1 - blk) / G + 1 and (C - 1 - vw) / KST + 1 computed here were three division
  // sequences (I2F, MUFU.RCP, F2I and a dependent IMAD chain each, plus a 64-bit division
  // call on the contiguous path) on the path of a block's setup before griddepcontrol.wait.
  const int G = static_cast<int>(gridDim.x) / KB, blk = static_cast<int>(blockIdx.x) / KB;
  const bool inter = p.tile_interleave != 0;
  const int tstep = inter ? G : 1;
  const int nt = gemv_share_count(p.tiles_q, p.tiles_r, blk);
  const int t0 = inter ? blk : gemv_share_first(p.tiles_q, p.tiles_r, blk);
  const int S = gemv_share_count(p.chunks_q, p.chunks_r, vw);
  const int L = nt * S;

  unsigned char* ring = smem + warp * kDepth * p.slot_bytes;
  const uint32_t ring_s = ptx::cvta_shared(ring);

  // Requests the next item of the issue cursor (tile it_tile, chunk it_chunk) into slot s,
  // then advances the cursor: every lane its 16-byte pieces of the bits slices; lanes
  // 0..2 slots-1 the scale entries, lanes 16.. the zero entries (the lane's "extra" piece).
  // Pieces of one lane form one cp.async group per item (the caller commits).
  //
  // Addresses (v8): the cursor is (it_tile, it_chunk); a full item's two sources (the
  // lane's 16 bytes of each weight slice, and its extra piece: scale or zero entries) are
  // base + chunk * A + tile * B, two 32 x 32 -> 64-bit multiply-adds (IMAD.WIDE.U32) from
  // per-lane bases, with no clamping or per-slice tests. (v7 computed both in signed 64-bit
  // arithmetic from the parameters with the partial-chunk tests on every item: ~75 issued
  // instructions per item, a quarter of a 4-bit item; docs/kernels/gemv.md v8.) The factors
  // fit 32 bits: chunk * 4096, tile * 16 k (k < 2^27), chunk * 16 n (n < 2^28,
  // smxx_gemv_can_implement). The tiled layout's partial last chunk (k % 256 != 0: only its
  // chunks inside k are copied, groups past k zero-filled) takes the general code; the gemv
  // layout has none.
  int it_tile = t0, it_chunk = vw;
  const unsigned char* const wbase = static_cast<const unsigned char*>(p.w) + lane * 16;
  const uint32_t w_tile_bytes = kTiled ? static_cast<uint32_t>(2 * kBits * p.k) : static_cast<uint32_t>(C * kItemBytes);
  const bool scale_lane = lane < 2 * kSlots;
  const bool zero_lane = zeros && lane >= 16 && lane < 16 + (kTiled ? kSlots : 2 * kSlots);
  const bool extra_lane = scale_lane || zero_lane;
  const uint32_t extra_dst = scale_lane ? kItemBytes + lane * 16 : kItemBytes + kScaleBytes + (lane - 16) * 16;
  // Tiled: scale rows (groups, n) of 2 bytes, the strip's 32 bytes of group grp at
  // (grp n + 16 tile) 2 (+ 16 for the second half of them); zero rows: u8, the strip's 16
  // bytes at grp n + 16 tile. Gemv layout: a grouped item's entries are contiguous at item *
  // slots * 32 bytes, per-channel entries belong to the tile (32 bytes).
  const uint32_t e_elem = kTiled && scale_lane ? 2u : 1u;  // tiled entry size
  const unsigned char* const ebase =
      kTiled ? (scale_lane ? reinterpret_cast<const unsigned char*>(p.scales) + 16 * (lane & 1) +
                                 static_cast<uint64_t>(kSlots == 1 ? 0 : lane >> 1) * static_cast<uint32_t>(2 * p.n)
                           : reinterpret_cast<const unsigned char*>(p.zeros) +
                                 static_cast<uint64_t>(kSlots == 1 ? 0 : lane - 16) * static_cast<uint32_t>(p.n))
             : reinterpret_cast<const unsigned char*>(scale_lane ? p.scales : p.zeros) + 16 * (scale_lane ? lane : lane - 16);
  const uint32_t e_chunk_bytes = kTiled ? (kSlots == 1 ? 0u : static_cast<uint32_t>(kSlots * p.n) * e_elem)
                                        : (kSlots == 1 ? 0u : static_cast<uint32_t>(kScaleBytes));
  const uint32_t e_tile_bytes = kTiled ? kTileRows * e_elem
                                       : (kSlots == 1 ? kEntriesPerSlot * 4u : static_cast<uint32_t>(C * kScaleBytes));
  // base + a * b: IMAD.WIDE.U32.
  auto mad = [](uint32_t a, uint32_t b, const unsigned char* base) { return base + static_cast<uint64_t>(a) * b; };
  auto issue = [&](int s) {
    const uint32_t dst = ring_s + static_cast<uint32_t>(s * p.slot_bytes);
    const int chunk = it_chunk;
    if (!kTiled || chunk * kChunkK + kChunkK <= p.k) {
      const unsigned char* wsrc = mad(static_cast<uint32_t>(it_tile), w_tile_bytes, mad(static_cast<uint32_t>(chunk), kItemBytes, wbase));
#pragma unroll
      for (int s2 = 0; s2 < kBits; ++s2) ptx::cp_async_16(dst + s2 * kSliceBytes + lane * 16, wsrc + s2 * kSliceBytes);
      if (extra_lane)
        ptx::cp_async_16(dst + extra_dst, mad(static_cast<uint32_t>(it_tile), e_tile_bytes, mad(static_cast<uint32_t>(chunk), e_chunk_bytes, ebase)));
    } else if constexpr (kTiled) {
      // The partial last chunk: its tiled chunks inside k; groups past k zero-filled.
      const unsigned char* wsrc = wbase + static_cast<int64_t>(it_tile) * (2 * kBits * p.k) + chunk * kItemBytes;
      const int inside = (p.k - chunk * kChunkK) / (kChunkK / kBits);
#pragma unroll
      for (int s2 = 0; s2 < kBits; ++s2)
        if (s2 < inside) ptx::cp_async_16(dst + s2 * kSliceBytes + lane * 16, wsrc + s2 * kSliceBytes);
      const int groups = kSlots == 1 ? 1 : (p.k * kSlots) / kChunkK;
      if (scale_lane) {
        const int grp = kSlots == 1 ? 0 : chunk * kSlots + (lane >> 1);
        const unsigned char* src = reinterpret_cast<const unsigned char*>(p.scales) +
                                   (static_cast<int64_t>(min(grp, groups - 1)) * p.n + kTileRows * it_tile) * 2 +
                                   16 * (lane & 1);
        ptx::cp_async_16_zfill(dst + extra_dst, src, grp < groups ? 16u : 0u);
      } else if (zero_lane) {
        const int grp = kSlots == 1 ? 0 : chunk * kSlots + (lane - 16);
        const unsigned char* src = reinterpret_cast<const unsigned char*>(p.zeros) +
                                   static_cast<int64_t>(min(grp, groups - 1)) * p.n + kTileRows * it_tile;
        ptx::cp_async_16_zfill(dst + extra_dst, src, grp < groups ? 16u : 0u);
      }
    }
    // The warp's next chunk (vw, vw + KST, ... < C: S of them), then the next tile.
    it_chunk += KST;
    if (it_chunk >= C) {
      it_chunk = vw;
      it_tile += tstep;
    }
  };

  // 1. Before the wait: this warp's first kPre = kDepth / 2 items; the other kDepth - kPre
  //    after the wait, once the activations are requested (issue_rest(), called where the
  //    first activation loads have been issued: staging, the correction table, or right
  //    after the wait). One commit group per item, empty ones included, so that group i is
  //    always item i. Why (session 22, docs/kernels/gemv.md v14): timestamps per block showed
  //    the activations, requested after griddepcontrol.wait, arriving only once the whole
  //    ring requested before it had arrived (the x loads queue behind the SM's cp.async), so
  //    every call's arithmetic started ~2 us after its block; with half the ring requested
  //    before the wait the activations come ~0.5 us sooner (W4 o: 2.17 -> 1.70 us from the
  //    wait to the first item), and with none before it the weight stream starts too late.
  constexpr int kPre = kDepth / 2;
  // Act-order weights (kPermuted; the activations staged once, the family's condition): packed
  // column j is original column perm[j], so the staging (1b: act_gather or act_scatter) stores
  // x[:, perm[j]] where packed column j belongs and nothing else changes (with k' = k the packed
  // weight is an ordinary grouped weight). act_gather (p.act_gather) reads the values by perm
  // from the block's copy of the rows. For act_scatter the block writes a table over the
  // original columns: dst[c] = the byte offset of c's packed place in the owning warp's
  // activation buffer for row 0 (row r adds 512 r, then the swizzle XORs bits 4..6 with r & 7);
  // with a cluster, -1 where another block owns it. Each warp fills the entries of its own chunks (lane L: the eight columns of its
  // 16-byte unit, unit L of the chunk), so no division is needed. The perm values (registers,
  // four chunks at a time) and k' are loaded here, before the wait (the index is a constant of
  // the weight, like the codes); the table is written after it, behind the first activation
  // loads (act_scatter), so that their latencies overlap. Written here, behind a block barrier,
  // it cost up to 1 us more per call (docs/kernels/gemv.md, "Act-order": a block's work before
  // the wait is not hidden, the next call's blocks cannot start beside this call's). k' != k
  // (groups of other sizes, padded with zero columns) leaves the pipeline for act_order_direct()
  // after the wait.
  [[maybe_unused]] int act_kp = 0;
  [[maybe_unused]] uint4 pv[4][2];
  [[maybe_unused]] const int32_t* perm = kPermuted ? p.act_index + tiled::kActOrderHeader : nullptr;
  [[maybe_unused]] auto perm_load = [&](int j0) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int col = (vw + (j0 + q) * KST) * kChunkK + 8 * lane;
      if (j0 + q < S && col < p.k) {
        pv[q][0] = ptx::ld_nc_v4(reinterpret_cast<const uint4*>(perm + col));
        pv[q][1] = ptx::ld_nc_v4(reinterpret_cast<const uint4*>(perm + col + 4));
      }
    }
  };
  [[maybe_unused]] auto perm_store = [&](int j0) {
    int* dsttab = reinterpret_cast<int*>(smem + p.place_offset);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int col = (vw + (j0 + q) * KST) * kChunkK + 8 * lane;
      if (j0 + q < S && col < p.k) {
        const uint32_t c[8] = {pv[q][0].x, pv[q][0].y, pv[q][0].z, pv[q][0].w,
                               pv[q][1].x, pv[q][1].y, pv[q][1].z, pv[q][1].w};
        const int base = warp * p.xbuf_stride + (j0 + q) * M * kSliceBytes + 16 * lane;
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if (c[e] < static_cast<uint32_t>(p.k)) dsttab[c[e]] = base + 2 * e;  // padding (-1) or corrupt: dropped
      }
    }
  };
  if constexpr (kPermuted) {
    act_kp = static_cast<int>(ptx::ld_nc_u32(reinterpret_cast<const uint32_t*>(p.act_index)));
    perm_load(0);
  }
#pragma unroll
  for (int d = 0; d < kPre; ++d) {
    if (d < L) issue(d);
    ptx::cp_async_commit();
  }
  if constexpr (kPermuted && kCluster) {  // the table's entries of the other blocks' chunks stay -1
    if (!p.act_gather) {
      int4* dsttab4 = reinterpret_cast<int4*>(smem + p.place_offset);
#pragma unroll 1
      for (int q = static_cast<int>(threadIdx.x); q < p.k / 4; q += static_cast<int>(blockDim.x))
        dsttab4[q] = make_int4(-1, -1, -1, -1);
      __syncthreads();
    }
  }
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  if constexpr (kPermuted) {
    if (act_kp != p.k) {
      ptx::cp_async_wait<0>();
      act_order_direct<kBits, kAct, kSlots>(p, act_kp);
      return;
    }
  }
  bool rest_issued = false;  // whichever prologue path comes first issues the rest, once
  auto issue_rest = [&]() {
    if (rest_issued) return;
    rest_issued = true;
#pragma unroll
    for (int d = kPre; d < kDepth; ++d) {
      if (d < L) issue(d);
      ptx::cp_async_commit();
    }
    // Tiled, grouped (p.scale_prefetch, the launch's choice): the block's contiguous 1 / grid
    // share of the (groups, n) scale rows, and of the u8 zero-point rows, prefetched into L2
    // (one prefetch.global.L2 per 128-byte line, the block's warps and lanes in turn), so that
    // the items' 32-byte pieces, scattered over the rows, hit L2. After the wait, behind the
    // activations and the ring (docs/kernels/gemv.md v20).
    if constexpr (kTiled && kSlots > 1) {
      if (p.scale_prefetch != 0) {
        const int64_t groups = static_cast<int64_t>(p.k) * kSlots / kChunkK;  // k is a multiple of the group
        auto prefetch_rows = [&](const void* rows, int64_t bytes) {
          const int64_t lines = (bytes + 127) / 128;
          const int64_t nb = gridDim.x, b0 = blockIdx.x;  // every block of a cluster its own share
          const int64_t l0 = b0 * lines / nb, l1 = (b0 + 1) * lines / nb;
          const unsigned char* b = static_cast<const unsigned char*>(rows);
          for (int64_t l = l0 + warp * 32 + lane; l < l1; l += KS * 32) ptx::prefetch_l2(b + l * 128);
        };
        prefetch_rows(p.scales, groups * p.n * 2);
        if (zeros) prefetch_rows(p.zeros, groups * p.n);
      }
    }
  };

  // B operands of chunk `chunk` for this lane (batch row g): per pair 8 activations (16
  // bytes f16/bf16, 8 bytes int8) of columns 256 chunk + 32 pair + 8 t, read through L1.
  // Batch rows g >= M read row M - 1: those mma columns are never stored. Pairs past k (the
  // last chunk when k % 256 != 0; k is a multiple of 32, so a pair is wholly inside or
  // outside) are zero, which zeroes both chains' products with the padded weights. int8
  // rows of 4-bit weights are permuted to the column order of the A registers
  // (int8_col_perm(): bytes 0, 2, 1, 3).
  const int xrow = min(g, M - 1);
  const unsigned char* x_row = static_cast<const unsigned char*>(p.x) + static_cast<int64_t>(xrow) * p.k * kElemBytes;
  auto load_pair = [&](uint32_t (&b)[4], const unsigned char* src) {
    if constexpr (kInt8) {
      const uint2 v = ptx::ld_nc_v2(reinterpret_cast<const uint2*>(src));
      b[0] = kBits == 4 ? ptx::prmt(v.x, 0, 0x3120u) : v.x;
      b[1] = kBits == 4 ? ptx::prmt(v.y, 0, 0x3120u) : v.y;
      b[2] = b[3] = 0;
    } else {
      const uint4 v = ptx::ld_nc_v4(reinterpret_cast<const uint4*>(src));
      b[0] = v.x, b[1] = v.y, b[2] = v.z, b[3] = v.w;
    }
  };
  // Tiled layout: step st = 2 pair + h of the pair needs columns 16 st + 2 t + {0, 1} (b0)
  // and + {8, 9} (b1): two 32-bit loads per step.
  auto load_pair_tiled = [&](uint32_t (&b)[4], const unsigned char* src) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      b[2 * h] = ptx::ld_nc_u32(reinterpret_cast<const uint32_t*>(src + 32 * h));
      b[2 * h + 1] = ptx::ld_nc_u32(reinterpret_cast<const uint32_t*>(src + 32 * h + 16));
    }
  };
  auto load_b = [&](uint32_t (&b)[kPairs][4], int chunk) {
    // A lane's first column: 8 t (gemv layout: 8 consecutive columns per pair) or 2 t (tiled:
    // the mma fragment's pairs); pairs are 32 columns apart in both.
    const int lane_col = kTiled ? 2 * t : 8 * t;
    const unsigned char* src = x_row + static_cast<int64_t>(chunk * kChunkK + lane_col) * kElemBytes;
    auto one = [&](uint32_t (&bp)[4], int pair) {
      if constexpr (kTiled) {
        load_pair_tiled(bp, src + 32 * pair * kElemBytes);
      } else {
        load_pair(bp, src + 32 * pair * kElemBytes);
      }
    };
    const int inside = (p.k - chunk * kChunkK) >> 5;  // pairs of the chunk inside k
    if (inside >= kPairs) {
#pragma unroll
      for (int pair = 0; pair < kPairs; ++pair) one(b[pair], pair);
    } else {
#pragma unroll
      for (int pair = 0; pair < kPairs; ++pair) {
        b[pair][0] = b[pair][1] = b[pair][2] = b[pair][3] = 0;
        if (pair < inside) one(b[pair], pair);
      }
    }
  };

  // Tiled layout: the warp's activation buffer (m rows x 512 bytes; 16-byte unit u of row r
  // at unit u ^ (r & 7), so the 8 rows of one ldmatrix matrix hit 8 different bank groups).
  // stage_x: lane L copies unit L (columns 8 L .. 8 L + 7 of the chunk) of every row, zeros
  // past k. read_b: ldmatrix.x4 per pair; lanes 8 q .. 8 q + 7 address matrix q = (step
  // 2 pair + q / 2, half q % 2), rows 0..7 clamped to m - 1 (finite, never stored), so
  // register q is B register (q & 1) of step 2 pair + (q >> 1): b[pair][q] as load_b gives.
  // With p.x_once the buffer holds the warp's S chunks (chunk j at j m 512 bytes), staged
  // once after griddepcontrol.wait: every tile of the block reads the same activations.
  const uint32_t xbuf_s = ptx::cvta_shared(smem + p.xbuf_offset) + static_cast<uint32_t>(warp * p.xbuf_stride);
  const uint32_t x_chunk_bytes = static_cast<uint32_t>(M * kSliceBytes);
  auto stage_x = [&](int chunk, uint32_t dst) {
    const int col = chunk * kChunkK + 8 * lane;
    const bool in = col < p.k;
    const unsigned char* src = static_cast<const unsigned char*>(p.x) + static_cast<int64_t>(col) * kElemBytes;
    uint4 v[8];
#pragma unroll
    for (int r = 0; r < 8; ++r)
      if (r < M) v[r] = in ? ptx::ld_nc_v4(reinterpret_cast<const uint4*>(src + static_cast<int64_t>(r) * p.k * kElemBytes))
                           : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int r = 0; r < 8; ++r)
      if (r < M) ptx::st_shared_v4(dst + r * kSliceBytes + 16 * (lane ^ (r & 7)), v[r]);
  };
  const int xr = min(lane & 7, M - 1);                           // this lane's ldmatrix row
  const uint32_t xq = static_cast<uint32_t>((lane >> 3) ^ (xr & 7));  // its matrix q, swizzled
  const uint32_t x_even = xbuf_s + xr * kSliceBytes + 16 * xq;         // pairs 0, 2, 4, 6
  const uint32_t x_odd = xbuf_s + xr * kSliceBytes + 16 * (xq ^ 4u);   // pairs 1, 3, 5, 7
  // Pairs [first, first + count) of the chunk staged at byte offset `at` of the buffer.
  auto read_b = [&](uint32_t (&b)[kPairs][4], int first, int count, uint32_t at) {
    // Unit of (pair, q) = 4 pair + q; XOR with r & 7 < 8 touches its low 3 bits only:
    // 128 (pair >> 1) + 16 ((4 (pair & 1) + q) ^ r7).
#pragma unroll
    for (int i = 0; i < count; ++i) {
      const int pair = first + i;
      ptx::ldmatrix_x4(b[pair], ((pair & 1) ? x_odd : x_even) + at + 128 * (pair >> 1));
    }
  };

  // The corrections of group gi of a chunk whose B operands are `b`: per lane cg (the 4
  // accumulator values of -sum (c_R + z_sym) x, f16/bf16) and cx (sum x; int8: as int bits),
  // the latter only with stored zero points or int8 activations.
  auto group_corr = [&](const uint32_t (&b)[kPairs][4], int gi, float4& vg, float4& vx) {
    if constexpr (kInt8) {
      int32_t cx[4] = {0, 0, 0, 0};
      const uint32_t ones[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
#pragma unroll
      for (int pp = 0; pp < kPPG; ++pp) {
        const uint32_t bb[2] = {b[gi * kPPG + pp][0], b[gi * kPPG + pp][1]};
        ptx::mma_m16n8k32_u8s8(cx, ones, bb);
      }
      vg = make_float4(0.f, 0.f, 0.f, 0.f);
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
          const uint32_t bb[2] = {b[gi * kPPG + pp][2 * h], b[gi * kPPG + pp][2 * h + 1]};
          uint32_t ac[4];
          detail::correction_a<kBits, kAct, kLayout>(gi * kPPG + pp, h, ac);
          ptx::mma_m16n8k16<T>(cg, ac, bb);
          if (zeros) ptx::mma_m16n8k16<T>(cx, ones, bb);
        }
      }
      vg = make_float4(cg[0], cg[1], cg[2], cg[3]);
      vx = make_float4(cx[0], cx[1], cx[2], cx[3]);
    }
  };

  // The warp's correction table: entry (j, gi, t) of chunk vw + j KST, float4 cg at [e], float4
  // cx at [S_max * slots * 4 + e] (section 2).
  float4* corr = reinterpret_cast<float4*>(smem + p.corr_offset + warp * p.corr_stride);
  const int cx_base = p.corr_stride / kCorrEntryBytes;  // float4 index of the cx half
  const bool table = p.corr_table != 0;
  // Tiled layout, activations staged once, m <= 2, a warp with two chunks or more (v15): the
  // correction of a row is one constant times the group's sum of x (correction_a: -(offset +
  // f z_sym), f the row's factor), so the table is filled from the staged registers with
  // shuffles (below) instead of 16 or 32 mma per chunk after the staging. Batch columns m..7
  // keep the zeros written here (never stored). Measured on H200, W4 g128 f16 m = 1, us: down
  // (4 chunks per warp) 11.05 -> 10.24, gate_up (2) 17.30 -> 16.97, but qkv (1 chunk) 5.79 ->
  // 6.01, and at m = 8 (a shuffle tree per row) the Suite-1 sum 48.6 -> 53.0: hence the
  // conditions (docs/kernels/gemv.md v15).
  [[maybe_unused]] constexpr float kCorrLo = -(detail::tiled_offset<kBits, kAct>() + kZeroSym);
  [[maybe_unused]] constexpr float kCorrHi =
      -(detail::tiled_offset<kBits, kAct>() + detail::tiled_hi_factor<kBits, kAct>() * kZeroSym);
  bool sum_table = false;
  if constexpr (kStageX && kTiled && !kInt8) {
    sum_table = table && p.x_once && M <= 2 && S >= 2;
    if (sum_table) {
      for (int i = lane; i < 2 * S * kSlots * 4; i += 32) corr[i < S * kSlots * 4 ? i : cx_base + i - S * kSlots * 4] = make_float4(0.f, 0.f, 0.f, 0.f);
      __syncwarp();
    }
  }

  // The group sums of one staged unit (chunk jj, row rr) for the tables (sum_table): the lane's 8
  // columns, then across the 32 / kSlots lanes of its group (xor butterfly: every lane of a group
  // gets the same bits); the group's first lane writes row rr's entries (jj, gi, t = rr / 2),
  // components rr % 2 (row g) and rr % 2 + 2 (row g+8): cg = c_row * sum, cx = sum.
  auto unit_sums = [&](const uint4& vq, int jj, int rr) {
    const uint32_t h[4] = {vq.x, vq.y, vq.z, vq.w};
    float sx = 0.0f;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float2 f;
      if constexpr (kAct == kActBf16) {
        f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&h[e]));
      } else {
        f = __half22float2(*reinterpret_cast<const __half2*>(&h[e]));
      }
      sx += f.x + f.y;
    }
#pragma unroll
    for (int off = 1; off < 32 / kSlots; off <<= 1) sx += __shfl_xor_sync(0xFFFFFFFFu, sx, off);
    if ((lane & (32 / kSlots - 1)) == 0) {
      const int gi = lane / (32 / kSlots);
      float* e = reinterpret_cast<float*>(corr + ((jj * kSlots + gi) * 4 + (rr >> 1)));
      float* ex = reinterpret_cast<float*>(corr + cx_base + ((jj * kSlots + gi) * 4 + (rr >> 1)));
      e[rr & 1] = kCorrLo * sx;
      e[(rr & 1) + 2] = kCorrHi * sx;
      ex[rr & 1] = sx;
      ex[(rr & 1) + 2] = sx;
    }
  };

  // Act-order (p.x_once): the block reads each activation row once, coalesced (16-byte loads,
  // every thread in turn, batches of 4 before their stores) and stores each value at its packed
  // column's place (the table above: the owning warp's buffer, swizzled as stage_once would have
  // placed it; entries of other blocks' chunks are -1; with a valid index every other entry is
  // written, and an entry outside the buffers, which only a corrupt index leaves, is skipped
  // rather than stored out of bounds). Packed columns past k (a partial last
  // chunk) are zeroed by their owners. Then one block barrier: warps read each other's stores.
  [[maybe_unused]] auto act_scatter = [&]() {
    const int* dsttab = reinterpret_cast<const int*>(smem + p.place_offset);
    const uint32_t xbuf0 = ptx::cvta_shared(smem + p.xbuf_offset);
    const int units_per_row = p.k / 8, units = units_per_row * M, nthr = static_cast<int>(blockDim.x);
    const uint32_t xlimit = static_cast<uint32_t>(KS * p.xbuf_stride);  // the block's activation buffers
    uint4 v[4];
    int rr[4], cc[4];
    auto load_batch = [&](int u0) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        rr[q] = cc[q] = 0;
        if (u0 + q * nthr < units) {
          int u = u0 + q * nthr, r = 0;
          while (u >= units_per_row) u -= units_per_row, ++r;  // r < m <= 8
          rr[q] = r, cc[q] = 8 * u;
          v[q] = ptx::ld_nc_v4(reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(p.x) +
                                                              (static_cast<int64_t>(r) * p.k + cc[q]) * kElemBytes));
        }
      }
    };
    auto scatter_batch = [&](int u0) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (u0 + q * nthr < units) {
          const int r = rr[q];
          const int4 d0 = *reinterpret_cast<const int4*>(dsttab + cc[q]);
          const int4 d1 = *reinterpret_cast<const int4*>(dsttab + cc[q] + 4);
          const int d[8] = {d0.x, d0.y, d0.z, d0.w, d1.x, d1.y, d1.z, d1.w};
          const uint32_t h[4] = {v[q].x, v[q].y, v[q].z, v[q].w};
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            // -1: another block's column. A valid entry is even and its rows stay inside the
            // buffers; the rounding and the second test only matter for a corrupt index (an
            // entry no perm value wrote), whose results are then wrong but whose stores stay
            // aligned and in bounds.
            const uint32_t at = (static_cast<uint32_t>(d[e]) & ~1u) + r * kSliceBytes;
            if (static_cast<uint32_t>(d[e]) < xlimit && at < xlimit)
              ptx::st_shared_u16(xbuf0 + (at ^ static_cast<uint32_t>((r & 7) << 4)), (e & 1) ? h[e >> 1] >> 16 : h[e >> 1] & 0xFFFFu);
          }
        }
      }
    };
    // The first batch's loads, the rest of the ring, then the table from the perm values loaded
    // before the wait (their latency overlapped the wait and these loads), one barrier, the
    // scatter.
    const int first = static_cast<int>(threadIdx.x);
    load_batch(first);
    issue_rest();
    perm_store(0);
#pragma unroll 1
    for (int j0 = 4; j0 < S; j0 += 4) {
      perm_load(j0);
      perm_store(j0);
    }
    __syncthreads();
    scatter_batch(first);
#pragma unroll 1
    for (int u0 = first + 4 * nthr; u0 < units; u0 += 4 * nthr) {
      load_batch(u0);
      scatter_batch(u0);
    }
    // The owners zero their units past k (the partial last chunk).
#pragma unroll 1
    for (int j = 0; j < S; ++j) {
      const int col = (vw + j * KST) * kChunkK + 8 * lane;
      if (col >= p.k)
        for (int r = 0; r < M; ++r)
          ptx::st_shared_v4(xbuf_s + static_cast<uint32_t>(j) * x_chunk_bytes + r * kSliceBytes + 16 * (lane ^ (r & 7)),
                            make_uint4(0u, 0u, 0u, 0u));
    }
    __syncthreads();
  };
  // The lanes' gather (act_gather, act_gather_rounds): the units (j, r) of x[:, perm] of this
  // lane's chunks j0 .. j0 + 3 (perm values in pv) and rows r0 .. r0 + kRows - 1 below m, from the
  // block's copy at place_offset, which holds the rows from r0 on: 8 two-byte shared loads at
  // perm[col + e] per unit (a perm value outside [0, k), which only a corrupt index holds, reads
  // as 0), each unit stored where the plain staging puts it, in this warp's buffer.
  // xs: the copy (smem + place_offset), kk: k (the callers' values, hoisted out of their loops).
  [[maybe_unused]] auto gather_units = [&](auto kRowsC, int j0, int r0, const uint16_t* xs, uint32_t kk) {
    constexpr int kRows = decltype(kRowsC)::value;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int j = j0 + q;
      if (j >= S) break;
      const int col = (vw + j * KST) * kChunkK + 8 * lane;
      const uint32_t c[8] = {pv[q][0].x, pv[q][0].y, pv[q][0].z, pv[q][0].w,
                             pv[q][1].x, pv[q][1].y, pv[q][1].z, pv[q][1].w};
#pragma unroll
      for (int rr = 0; rr < kRows; ++rr) {
        const int r = r0 + rr;
        if (r >= M) break;
        uint32_t h[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) h[e] = col < p.k && c[e] < kk ? xs[rr * p.k + static_cast<int>(c[e])] : 0u;
        const uint4 u = make_uint4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
        ptx::st_shared_v4(xbuf_s + static_cast<uint32_t>(j) * x_chunk_bytes + r * kSliceBytes + 16 * (lane ^ (r & 7)), u);
        if (sum_table) unit_sums(u, j, r);
      }
    }
  };
  // Act-order with p.act_gather (m <= kActGatherMaxM, and above where the launch allows it;
  // choose_gemv_launch): the block copies the activation rows as they are into the region at
  // place_offset (16-byte loads and stores, every thread in turn, batches of 4), one block
  // barrier, then each lane gathers the 8 values of each of its units, x[r, perm[col + e]], from
  // there (2-byte shared loads; a perm value outside [0, k), which only a corrupt index holds,
  // reads as 0) and stores the unit where the plain staging puts it, in its own warp's buffer:
  // no table, no second block barrier. Against the scatter above: no table (k random 4-byte
  // stores), and the values move by m k random 2-byte loads instead of m k random 2-byte stores.
  // Session 68, H200: 3-20% faster per layer at m = 1..6 (docs/kernels/gemv.md, "Act-order").
  // Not kept: the same in rounds of R < m rows where the copy of every row does not fit beside
  // the launch's other buffers (session 68 call 3: faster for W4 at m = 7 / 8, slower for W8 at
  // m = 4..7, and with two paths beside the scatter the kernels spilled).
  [[maybe_unused]] auto act_gather = [&]() {
    const unsigned char* xg = static_cast<const unsigned char*>(p.x);
    const uint32_t xrow0 = ptx::cvta_shared(smem + p.place_offset);
    const uint16_t* xs = reinterpret_cast<const uint16_t*>(smem + p.place_offset);
    const int units = (p.k / 8) * M, nthr = static_cast<int>(blockDim.x);
    uint4 v[4];
    auto copy_batch = [&](int u0, bool first) {
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (u0 + q * nthr < units) v[q] = ptx::ld_nc_v4(reinterpret_cast<const uint4*>(xg + 16 * static_cast<int64_t>(u0 + q * nthr)));
      if (first) issue_rest();
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (u0 + q * nthr < units) ptx::st_shared_v4(xrow0 + 16u * static_cast<uint32_t>(u0 + q * nthr), v[q]);
    };
    const int first = static_cast<int>(threadIdx.x);
    copy_batch(first, true);
#pragma unroll 1
    for (int u0 = first + 4 * nthr; u0 < units; u0 += 4 * nthr) copy_batch(u0, false);
    __syncthreads();
    const uint32_t kk = static_cast<uint32_t>(p.k);
#pragma unroll 1
    for (int j0 = 0; j0 < S; j0 += 4) {
      if (j0 > 0) perm_load(j0);
      gather_units(std::integral_constant<int, 8>{}, j0, 0, xs, kk);
    }
    __syncwarp();
  };
  // Act-order in rounds (kRounds: 4-bit weights where the copy of every row would change the
  // launch; choose_gemv_launch): the table's region (4 k bytes) holds kActGatherRoundRows rows.
  // Round i copies rows [2i, 2i + 2) as act_gather copies them, one block barrier, the lanes
  // gather those rows into their units, one block barrier before the next round's copy
  // overwrites the region; the next round's first loads are issued before the gather, so that
  // their latency overlaps it. The perm values stay in registers across the rounds where a warp
  // has at most four chunks, else they are reloaded per round. Session 68 measured this order
  // (as a run-time path) 0.6-1.4 us per layer faster than the table's scatter for W4 at m = 7 / 8.
  [[maybe_unused]] auto act_gather_rounds = [&]() {
    constexpr int R = kActGatherRoundRows;
    const unsigned char* xg = static_cast<const unsigned char*>(p.x);
    const uint32_t xrow0 = ptx::cvta_shared(smem + p.place_offset);
    const uint16_t* xs = reinterpret_cast<const uint16_t*>(smem + p.place_offset);
    const int row_units = p.k / 8, nthr = static_cast<int>(blockDim.x), first = static_cast<int>(threadIdx.x);
    uint4 v[4];
    // Units [u0, u0 + 4 nthr) of the rows from r0 (at most R of them), 16 bytes each.
    auto load = [&](int r0, int u0) {
      const int units = min(R, M - r0) * row_units;
      const unsigned char* src = xg + 16 * static_cast<int64_t>(r0) * row_units;
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (u0 + q * nthr < units) v[q] = ptx::ld_nc_v4(reinterpret_cast<const uint4*>(src + 16 * static_cast<int64_t>(u0 + q * nthr)));
    };
    auto store = [&](int r0, int u0) {
      const int units = min(R, M - r0) * row_units;
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (u0 + q * nthr < units) ptx::st_shared_v4(xrow0 + 16u * static_cast<uint32_t>(u0 + q * nthr), v[q]);
    };
    const uint32_t kk = static_cast<uint32_t>(p.k);
    load(0, first);
    issue_rest();
#pragma unroll 1
    for (int r0 = 0; r0 < M; r0 += R) {
      const int units = min(R, M - r0) * row_units;
      store(r0, first);
#pragma unroll 1
      for (int u0 = first + 4 * nthr; u0 < units; u0 += 4 * nthr) {
        load(r0, u0);
        store(r0, u0);
      }
      __syncthreads();
      if (r0 + R < M) load(r0 + R, first);
#pragma unroll 1
      for (int j0 = 0; j0 < S; j0 += 4) {
        if (j0 > 0 || (r0 > 0 && S > 4)) perm_load(j0);
        gather_units(std::integral_constant<int, R>{}, j0, r0, xs, kk);
      }
      if (r0 + R < M) __syncthreads();  // every lane has read this round's rows
    }
    __syncwarp();
  };
  // 1b. p.x_once: the warp's S chunks of activations into its buffer, read by every item.
  //     The (chunk, row) units (16 bytes per lane: columns 8 lane .. 8 lane + 7 of the chunk,
  //     zeros past k; swizzled as stage_x does) go in batches of 8 loads before their stores,
  //     so that a warp with several chunks waits for one global-memory latency per batch, not
  //     per chunk (Suite 1's down at m = 1: 4 chunks per warp, one batch); the rest of the
  //     ring is requested right after the first batch's loads.
  if constexpr (kPermuted) {
    // Act-order: gathered by each lane (m <= 2, with the group sums), or placed by the block
    // (act_scatter) and read back for the group sums.
    if constexpr (kRounds) {
      act_gather_rounds();
    } else if (p.act_gather) {
      act_gather();
    } else {
      act_scatter();
    }
    if (sum_table && !p.act_gather) {
#pragma unroll 1
      for (int j = 0; j < S; ++j)
        for (int r = 0; r < M; ++r)
          unit_sums(ptx::ld_shared_v4(xbuf_s + static_cast<uint32_t>(j) * x_chunk_bytes + r * kSliceBytes + 16 * (lane ^ (r & 7))), j, r);
      __syncwarp();
    }
  } else if constexpr (kStageX) {
    if (p.x_once) {
      int bj = 0, br = 0;  // the next unit (chunk j, row r)
#pragma unroll 1
      for (int u0 = 0; u0 < S * M; u0 += 8) {
        uint4 v[8];
        uint32_t dst[8];
        const int j0 = bj, r0 = br;  // the batch's first unit
        int j = j0, r = r0;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          if (u0 + q < S * M) {
            const int col = (vw + j * KST) * kChunkK + 8 * lane;
            v[q] = col < p.k ? ptx::ld_nc_v4(reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(p.x) +
                                                                            (static_cast<int64_t>(r) * p.k + col) * kElemBytes))
                             : make_uint4(0u, 0u, 0u, 0u);
            dst[q] = xbuf_s + static_cast<uint32_t>(j) * x_chunk_bytes + r * kSliceBytes + 16 * (lane ^ (r & 7));
            if (++r == M) r = 0, ++j;
          }
        }
        bj = j, br = r;
        issue_rest();
#pragma unroll
        for (int q = 0; q < 8; ++q)
          if (u0 + q < S * M) ptx::st_shared_v4(dst[q], v[q]);
        if (sum_table) {
          int jj = j0, rr = r0;
#pragma unroll
          for (int q = 0; q < 8; ++q) {
            if (u0 + q < S * M) {
              unit_sums(v[q], jj, rr);
              if (++rr == M) rr = 0, ++jj;
            }
          }
        }
      }
      __syncwarp();
    }
  }

  // 2. The warp's correction table: entry (j, gi, t) of chunk vw + j KST, float4 cg at
  //    [e], float4 cx at [S_max * slots * 4 + e]. Lanes of row pair g = 0 write (the values
  //    do not depend on g); the warp reads its own table only (__syncwarp).
  if (table && !sum_table) {
#pragma unroll 1
    for (int j = 0; j < S; ++j) {
      uint32_t b[kPairs][4];
      // Staged once (tiled, p.x_once): from the warp's buffer (ldmatrix), not a second pass
      // over global memory; the prologue then has one global-memory latency, not two (v8).
      if constexpr (kStageX) {
        if (p.x_once) {
          read_b(b, 0, kPairs, static_cast<uint32_t>(j) * x_chunk_bytes);
        } else {
          load_b(b, vw + j * KST);
        }
      } else {
        load_b(b, vw + j * KST);
      }
      issue_rest();
#pragma unroll
      for (int gi = 0; gi < kSlots; ++gi) {
        float4 vg, vx;
        group_corr(b, gi, vg, vx);
        if (g == 0) {
          const int e = (j * kSlots + gi) * 4 + t;
          corr[e] = vg;
          corr[cx_base + e] = vx;
        }
      }
    }
    __syncwarp();
  }

  issue_rest();
  const bool sbf16_rt = p.scale_bf16 != 0;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};

  // 3. One item from ring slot s, chunk `chunk` (the warp's j-th): every group of it. Each
  //    group's steps alternate between two accumulators (h = 0, 1): two independent chains.
  //    kTableC / kZerosC (std::integral_constant): the run-time choices `table` and `zeros`
  //    as compile-time constants, so that the item is straight-line code (the item loop is
  //    instantiated per combination and chosen once per call; with run-time branches
  //    between the groups the compiler did not interleave their mma chains: Suite-1 sums
  //    7-9% faster, docs/kernels/gemv.md v7). kZerosC = kZerosRuntime keeps the run-time
  //    test: the rare per-item-correction path (long k, group 32, zero points) is
  //    instantiated once, not twice (code size).
  //    kScaleC (std::true_type): the scales are in the activation dtype, a compile-time fact
  //    (else p.scale_bf16 at run time: a predicated pair of conversions per scale, v23).
  auto compute = [&](int s, int chunk, int j, auto kTableC, auto kZerosC, auto kScaleC) {
    constexpr bool kTable = decltype(kTableC)::value;
    constexpr int kZ = decltype(kZerosC)::value;
    const bool sbf16 = decltype(kScaleC)::value ? kAct == kActBf16 : sbf16_rt;
    const bool has_zeros = kZ == detail::kZerosRuntime ? zeros : kZ == detail::kZerosYes;
    const unsigned char* slot = ring + s * p.slot_bytes;
    // Tiled: small m reads the B pairs straight from global memory (32-bit loads, all issued
    // before the first mma: 1..2 rows per instruction), larger m (kStageX) through the staged
    // buffer (ldmatrix, pair by pair: the latency of each is a shared-memory one).
    [[maybe_unused]] uint32_t x_at = 0;  // the chunk's place in the activation buffer
    if constexpr (kStageX) {
      if (p.x_once) {
        x_at = static_cast<uint32_t>(j) * x_chunk_bytes;
      } else {
        stage_x(chunk, xbuf_s);  // before the weights are live (its 8 x 16 bytes of registers)
        __syncwarp();
      }
    }
    uint32_t w[4 * kBits];
#pragma unroll
    for (int s2 = 0; s2 < kBits; ++s2) {
      const uint4 v = *reinterpret_cast<const uint4*>(slot + s2 * kSliceBytes + lane * 16);
      w[4 * s2 + 0] = v.x;
      w[4 * s2 + 1] = v.y;
      w[4 * s2 + 2] = v.z;
      w[4 * s2 + 3] = v.w;
    }
    uint32_t b[kPairs][4];
    if constexpr (!kStageX) load_b(b, chunk);
    const uint32_t* sent = reinterpret_cast<const uint32_t*>(slot + kItemBytes);  // [slot][g]
    const uint32_t* zent = sent + kScaleEntries;
#pragma unroll
    for (int gi = 0; gi < kSlots; ++gi) {
      // Tiled: the B operands come pair by pair from the warp's activation buffer (below),
      // and per-item corrections join the chains there (fewer live registers: with the
      // whole chunk's B live, 8-bit per-channel weights spilled).
      float4 vg = make_float4(0.f, 0.f, 0.f, 0.f), vx = vg;
      if constexpr (kTable) {
        const int e = (j * kSlots + gi) * 4 + t;
        vg = corr[e];
        vx = corr[cx_base + e];
      } else if constexpr (!kTiled) {
        group_corr(b, gi, vg, vx);
      }
      const uint32_t se = sent[gi * kEntriesPerSlot + g];
      const float slo = detail::half_to_f32(se & 0xFFFFu, sbf16);
      // Tiled f16 4-bit: rows g+8 summed c + 16 q (tiled_hi_factor), so their scale is s / 16.
      constexpr float kHiFactor = kTiled ? detail::tiled_hi_factor<kBits, kAct>() : 1.0f;
      const float shi = detail::half_to_f32(se >> 16, sbf16) * (1.0f / kHiFactor);

      if constexpr (kInt8) {
        const int32_t cx[4] = {__float_as_int(vx.x), __float_as_int(vx.y), __float_as_int(vx.z), __float_as_int(vx.w)};
        int32_t cq[4] = {0, 0, 0, 0};
#pragma unroll
        for (int pp = 0; pp < kPPG; ++pp) {
          uint32_t a[4];
          int8_pair<kBits>(w, gi * kPPG + pp, a);
          const uint32_t bb[2] = {b[gi * kPPG + pp][0], b[gi * kPPG + pp][1]};
          ptx::mma_m16n8k32_u8s8(cq, a, bb);
        }
        int izl = static_cast<int>(kZeroSym), izh = izl;
        if (has_zeros) {
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
        // The first chain starts from the correction: it ends at
        // sum (c + q) x - sum (c + z_sym) x = sum (q - z_sym) x.
        float cd[2][4] = {{vg.x, vg.y, vg.z, vg.w}, {0.f, 0.f, 0.f, 0.f}};
        [[maybe_unused]] float cxi[4] = {0.f, 0.f, 0.f, 0.f};  // tiled, per-item corrections: sum x
#pragma unroll
        for (int pp = 0; pp < kPPG; ++pp) {
          if constexpr (kStageX) read_b(b, gi * kPPG + pp, 1, x_at);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t bb[2] = {b[gi * kPPG + pp][2 * h], b[gi * kPPG + pp][2 * h + 1]};
            uint32_t a[4];
            if constexpr (kTiled) {
              detail::tiled_step<kBits, kAct>(w, 2 * (gi * kPPG + pp) + h, a);
            } else {
              const int r0 = 8 * (gi * kPPG + pp) + 4 * h;
              a[0] = raw_reg<kBits, kBf16>(w, r0 + 0);
              a[1] = raw_reg<kBits, kBf16>(w, r0 + 1);
              a[2] = raw_reg<kBits, kBf16>(w, r0 + 2);
              a[3] = raw_reg<kBits, kBf16>(w, r0 + 3);
            }
            ptx::mma_m16n8k16<T>(cd[h], a, bb);
            if constexpr (kTiled) {
              if constexpr (!kTable) {  // the correction products in the same chain (group_corr's terms)
                uint32_t ac[4];
                detail::correction_a<kBits, kAct, kLayout>(gi * kPPG + pp, h, ac);
                ptx::mma_m16n8k16<T>(cd[h], ac, bb);
                if (has_zeros) {
                  const uint32_t one2 = kBf16 ? 0x3F803F80u : 0x3C003C00u;
                  const uint32_t ones[4] = {one2, one2, one2, one2};
                  ptx::mma_m16n8k16<T>(cxi, ones, bb);
                }
              }
            }
          }
        }
        if constexpr (kTiled)
          if constexpr (!kTable) vx = make_float4(cxi[0], cxi[1], cxi[2], cxi[3]);
        float ct[4] = {cd[0][0] + cd[1][0], cd[0][1] + cd[1][1], cd[0][2] + cd[1][2], cd[0][3] + cd[1][3]};
        if (has_zeros) {
          float dlo, dhi;
          if constexpr (kTiled) {  // u8 zero points of rows g, g+8 (16 bytes per group)
            const uint32_t zz = reinterpret_cast<const uint16_t*>(zent)[gi * kEntriesPerSlot + g];
            dlo = kZeroSym - static_cast<float>(zz & 0xFFu);
            dhi = (kZeroSym - static_cast<float>(zz >> 8)) * kHiFactor;
          } else {
            const uint32_t ze = zent[gi * kEntriesPerSlot + g];
            dlo = kZeroSym - detail::half_to_f32(ze & 0xFFFFu, sbf16);
            dhi = kZeroSym - detail::half_to_f32(ze >> 16, sbf16);
          }
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

  // 4. Partial sums: two buffers (phases alternate) of P tiles, each [tile of the phase]
  //    [warp][m][row]. Tile lt of the block sits at slot lt % P of buffer (lt / P) & 1.
  float* part = reinterpret_cast<float*>(smem + p.part_offset);
  const int P = p.phase_tiles;
  auto part_tile = [&](int buf, int slot) { return part + static_cast<int64_t>(buf * P + slot) * KS * M * kTileRows; };
  auto flush = [&](int buf, int slot) {
    float* pw = part_tile(buf, slot) + warp * M * kTileRows;
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
  };
  // The block (the cluster) sums the `count` tiles of a phase (tiles first.., buffer `buf`),
  // one output (tile, m, row) per thread: each output's parts in the cluster's warp order
  // (block rank, then warp: fixed, deterministic), plus the bias, times the x scale (int8),
  // stored. With a cluster its blocks take every KB-th output and read the other blocks'
  // parts through distributed shared memory (mapa + ld.shared::cluster). (v7 first had one
  // warp per tile: at m = 8 its 16 x 8 outputs x KS parts held up the whole block at every
  // barrier.)
  const int nthreads = static_cast<int>(blockDim.x);
  auto reduce_phase = [&](int first, int buf, int count) {
    const int per_tile = M * kTileRows;
#pragma unroll 1
    for (int o = crank * nthreads + static_cast<int>(threadIdx.x); o < count * per_tile; o += KB * nthreads) {
      int q = 0, rem = o;
      while (rem >= per_tile) rem -= per_tile, ++q;  // q < count <= P: a few steps at most
      const int m = rem / kTileRows, r = rem % kTileRows;
      const int n = (t0 + (first + q) * tstep) * kTileRows + r;
      const float* pb = part_tile(buf, q);
      float sum = 0.0f;
      if constexpr (!kCluster) {
#pragma unroll 4
        for (int w = 0; w < KS; ++w) sum += pb[(w * M + m) * kTileRows + r];
      } else {
        // Eight parts loaded back to back, then summed (in order), so that their
        // distributed-shared-memory latencies overlap. Measured no faster than a load-add
        // loop (down W4 m = 8: 19.43 against 19.46 us, 16 warps); kept because with the
        // plain loop ptxas spilled in more kernels (measured when every kernel carried this
        // code; the cluster kernels of Suite 1's formats, W4 g128 and W8 per-channel f16,
        // spill nothing).
        const uint32_t own = ptx::cvta_shared(pb + m * kTileRows + r);
#pragma unroll 1
        for (int cb = 0; cb < KB; ++cb) {
          const uint32_t at = ptx::mapa_shared(own, static_cast<uint32_t>(cb));
#pragma unroll 1
          for (int w0 = 0; w0 < KS; w0 += 8) {
            float v[8];
#pragma unroll
            for (int w = 0; w < 8; ++w)
              v[w] = w0 + w < KS ? ptx::ld_shared_cluster_f32(at + static_cast<uint32_t>((w0 + w) * M * kTileRows * 4)) : 0.0f;
#pragma unroll
            for (int w = 0; w < 8; ++w)
              if (w0 + w < KS) sum += v[w];
          }
        }
      }
      if (n < N) {
        if constexpr (kInt8) sum *= p.x_scales[m];
        if (p.has_bias) sum += detail::load_out(p.bias, n, p.out_dtype);
        detail::store_out(p.y, static_cast<int64_t>(m) * N + n, sum, p.out_dtype);
      }
    }
  };

  // 5. The item stream. Item i sits in slot i % kDepth; commit group i is item i (one
  //    group per iteration, empty past the end), so wait_group(kDepth - 1) leaves items
  //    i + 1 .. i + kDepth - 1 in flight. The __syncwarp after the wait makes the scale
  //    entries other lanes copied visible; the one before the refill orders every lane's
  //    reads of the slot before the new copies (write-after-read).
  //    After each tile's S items the warp writes its partial sums; after P tiles (or the
  //    block's last) the block meets at one barrier and sums that phase's tiles, one output
  //    per thread. A phase buffer is written again two phases later, after the next barrier,
  //    which every thread reaches only once it has summed.
  auto item_loop = [&](auto kTableC, auto kZerosC, auto kScaleC) {
    // lt: tiles done; slot / buf: lt's place in the phase buffers; first: the phase's first
    // tile.
    int s = 0, j = 0, lt = 0, slot = 0, buf = 0, first = 0;
#pragma unroll 1
    for (int i = 0; i < L; ++i) {
      ptx::cp_async_wait<kDepth - 1>();
      __syncwarp();
      compute(s, vw + j * KST, j, kTableC, kZerosC, kScaleC);
      __syncwarp();
      if (i + kDepth < L) issue(s);  // item i + kDepth: the cursor's next
      ptx::cp_async_commit();
      s = s + 1 == kDepth ? 0 : s + 1;
      if (++j == S) {
        j = 0;
        flush(buf, slot);
        ++lt;
        if (++slot == P || lt == nt) {
          // The whole cluster's partial sums of the phase are written (release / acquire at
          // cluster scope), or the block's.
          if constexpr (kCluster) {
            ptx::cluster_sync();
          } else {
            __syncthreads();
          }
          reduce_phase(first, buf, slot);
          first = lt;
          slot = 0;
          buf ^= 1;
        }
      }
    }
  };
  using Zeros = std::integral_constant<int, detail::kZerosYes>;
  using NoZeros = std::integral_constant<int, detail::kZerosNo>;
  using ZerosRuntime = std::integral_constant<int, detail::kZerosRuntime>;
  // Grouped 8-bit weights of the tiled layout, symmetric, with the correction table and the
  // scales in the activation dtype take a fourth copy of the loop with the scale conversion
  // fixed at compile time; everything else converts by p.scale_bf16. Session 31 (docs/kernels/
  // gemv.md v23), H200, same run, two rounds, Suite-1 sums, us: w8 g128 f16 m = 1 59.8, 59.9 ->
  // 58.1, 58.2 (down 16.47 -> 15.65, gate_up 30.10 -> 29.26), m = 8 77.1, 77.0 -> 70.4, 70.4
  // (qkv 10.84 -> 8.84, gate_up 35.94 -> 31.31; down 22.47 -> 22.72). These kernels spill at
  // the 128-register cap, and with the run-time conversion's predicated pairs ptxas reloaded
  // a spilled value once per item (STL / LDL after each item loop's mma block in SASS); now
  // no item loop touches local memory. The same copy in every kernel lost up to 0.1 us on W4
  // g128 (qkv 6.05 -> 6.16), 0.4 on asymmetric W4 and 0.15 on W8 per-channel (their code
  // changed around the extra copy), so it is confined to these.
  constexpr bool kScaleCopy = kTiled && kBits == 8 && kSlots > 1 && !kInt8;
  const bool scale_is_act = kScaleCopy && sbf16_rt == (kAct == kActBf16);
  if (table) {
    if (zeros) {
      item_loop(std::true_type{}, Zeros{}, std::false_type{});
    } else if (scale_is_act) {
      if constexpr (kScaleCopy) item_loop(std::true_type{}, NoZeros{}, std::true_type{});
    } else {
      item_loop(std::true_type{}, NoZeros{}, std::false_type{});
    }
  } else {
    item_loop(std::false_type{}, ZerosRuntime{}, std::false_type{});
  }
  ptx::cp_async_wait<0>();
  // A block's shared memory must outlive the other blocks' reads of its last phase (their
  // loads are complete when they arrive: relaxed, no release; ptx::cluster_sync_relaxed).
  if constexpr (kCluster) ptx::cluster_sync_relaxed();
}

}  // namespace detail

template <int kBits, int kAct, int kSlots, int kLayout, bool kStageX, bool kCluster, bool kPermuted, bool kRounds>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks) smxx_gemv_kernel(const __grid_constant__ GemvParams p) {
#if LOWBIT_HAS_SM80
  if constexpr (kCluster && !LOWBIT_HAS_SM90) {
    LOWBIT_DEVICE_TRAP("smxx_gemv: the k split across a cluster needs sm_90");  // never launched there
  } else {
    detail::gemv_body<kBits, kAct, kSlots, kLayout, kStageX, kCluster, kPermuted, kRounds>(p);
  }
#else
  LOWBIT_DEVICE_TRAP("smxx_gemv needs sm_80 or newer");
#endif
}

}  // namespace lowbit::gemv
