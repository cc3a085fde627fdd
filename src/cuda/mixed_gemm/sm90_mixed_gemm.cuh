// The Hopper mixed GEMM kernel (sm_90a): f16/bf16 activations x 4/8-bit tiled weights,
// TMA loads, wgmma with the dequantized weights as the REGISTER A operand, one producer
// warpgroup and two consumer warpgroups, a persistent walk over (tile, split) units.
// Design and numbers: docs/kernels/mixed_gemm.md, "sm90_mixed_gemm".
//
// Orientation: out^T = W * X^T. The wgmma M (64 per consumer warpgroup) is output channels,
// its N (kTK) tokens, its K the reduction. A CTA tile is 128 channels (consumer c owns
// channels 64c .. 64c + 63 = strips 4c .. 4c + 3 of the tile, warp w of it strip 4c + w)
// x kTK tokens, and k goes in blocks of 64 columns.
//
// Why the weights are the register operand: the tiled layout gives each lane, in 16 bytes of
// a 512-byte chunk, exactly its mma.m16n8k16 A fragments of one strip, and the A fragment of
// wgmma m64nNk16 from registers is that fragment per warp (warp w = rows 16w .. 16w + 15).
// So a warp reads its strip's 16 (4-bit) or 32 (8-bit) bytes of a k block from shared memory
// (one conflict-free LDS.128 per 512 bytes), decodes them with TiledDecoder (the same exact
// integer decode as the sm80 kernel, scale applied with one hmul2 per register for grouped
// weights) and issues four wgmma k16 against the activation tile, which the tensor core
// reads from shared memory through a descriptor. No dequantized tile is ever written back.
//
// Per stage s (a k block), two producer threads in two warps issue the TMA loads into the
// stage: thread 0 (warp 0) W (8 strips x the k block's 128 x bits bytes, no swizzle, strips
// past n zero-filled) and the k block's scale / zero rows, thread 32 (warp 1) X (kTK rows x
// 64 columns, 128-byte swizzle, rows past m zero-filled). Each issues its own
// arrive.expect_tx with its bytes. Why two (session 47): at m <= 128 a stage lasts ~400 ns and
// one thread's serial path per stage (empty-barrier wait, expect_tx, three or four TMA issues,
// each in ptxas's ELECT loop, and then an integer division for the group row) set the pace:
// W4 g128 at m = 64 ran ~20% slower than with that path split and the division made a shift
// (docs/kernels/mixed_gemm.md, sm90 v14).
// Barriers: full[s] count 2 (the two producer threads' arrive.expect_tx + TMA bytes);
// empty[s] count 8 (lane 0 of each consumer warp once the wgmmas that read stage s have
// completed). Producers and consumers walk the same (unit, k block) sequence `it`, stage
// it % kStages, phase it / kStages (the producers keep both as counters).
//
// Register pipeline (the RS operand's rule: the A registers must stay untouched until the
// group reading them retires): k block i decodes into register buffer i % 2, issues its four
// wgmmas as one commit group, then waits until at most one group is pending
// (wgmma.wait_group 1): group i - 1 has finished, so its stage is released and its A buffer
// is free for block i + 1, while group i keeps the tensor core busy during that decode.
// The k loop is unrolled by two so both buffers are named registers. The widest tiles split
// each block into two halves instead (kHalves, see k_loop).
//
// Act-order weights: the activations arrive gathered into the packed column order (k' columns),
// the kernel takes its k-block count from the index (k_blocks_of()) and its producers use the
// tensor maps re-extented to k' on the device (map_of(); sm90_mixed_gemm_act_order.cu).
//
// Numerics: grouped weights enter the mma as (q - z) * s rounded once to T (as Marlin and the
// sm80 kernel at large m); per-channel weights as the exact integers q - z, the scale
// applied in fp32 after the k loop. fp32 accumulation throughout (wgmma f16/bf16 inputs
// accumulate in fp32).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/dequant/sm80_tiled_decode.cuh"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_shared.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/smxx_config.hpp"
#include "cuda/ptx/tensormap.cuh"
#include "cuda/ptx/tma.cuh"
#include "cuda/ptx/wgmma.cuh"
#include "cuda/ptx/wgmma_rs.cuh"

namespace lowbit::cuda::sm90mixed {

// unit -> (token tile, channel tile, split) and the split's k-block range; producer and
// consumers must agree exactly. Split fastest, then the token tile: CTAs running at the same
// time share the channel tile's weights and, over the walk, reuse each token tile's
// activations from L2.
struct Unit {
  int tile_t, tile_c, split, kb_begin, kb_end;
  bool direct;  // the unit's sums are the output (one split), else fp32 partials (plane `split`)
};
__device__ __forceinline__ Unit unit_of(const Sm90MixedParams& p, int u, int k_blocks) {
  Unit r;
  r.direct = p.splits == 1;
  r.split = u % p.splits;
  const int t = u / p.splits;
  r.tile_t = t % p.tiles_t;
  r.tile_c = t / p.tiles_t;
  r.kb_begin = static_cast<int>(int64_t(r.split) * k_blocks / p.splits);
  r.kb_end = static_cast<int>(int64_t(r.split + 1) * k_blocks / p.splits);
  return r;
}

// A CTA's walk, the same for its producers and consumers: its whole units (u = blockIdx.x,
// + gridDim.x, ... < p.units), then, with a stream-K tail (p.sk_tiles > 0: one token tile, one
// split), its share [floor(b S / G), floor((b + 1) S / G)) of the tail's S = sk_tiles x
// k_blocks (tile, k block) iterations (G = gridDim.x <= S, so no share is empty), cut at tile
// boundaries into pieces. A piece is plane (b - the first CTA of its tile) of the partial sums;
// the reduce kernel adds a tile's planes in order (deterministic). The whole units come first
// so that, as without the tail, the CTAs stream the same k blocks of the activations together.
struct Walk {
  int u;
  int64_t pos, end, iters;
};
__device__ __forceinline__ Walk walk_begin(const Sm90MixedParams& p) {
  Walk w;
  w.u = blockIdx.x;
  w.iters = int64_t(p.sk_tiles) * p.k_blocks;
  w.pos = w.iters * blockIdx.x / gridDim.x;
  w.end = w.iters * (blockIdx.x + 1) / gridDim.x;
  return w;
}
__device__ __forceinline__ bool walk_next(const Sm90MixedParams& p, Walk& w, Unit& un) {
  if (w.u < p.units) {
    un = unit_of(p, w.u, p.k_blocks);
    w.u += gridDim.x;
    return true;
  }
  if (w.pos >= w.end) return false;
  const int j = static_cast<int>(w.pos / p.k_blocks);
  un.tile_t = 0;
  un.tile_c = p.sk_tile0 + j;
  un.kb_begin = static_cast<int>(w.pos - int64_t(j) * p.k_blocks);
  un.kb_end = static_cast<int>(min(int64_t(p.k_blocks), un.kb_begin + (w.end - w.pos)));
  un.split = static_cast<int>(blockIdx.x - sm90_mixed_sk_cta_of(int64_t(j) * p.k_blocks, w.iters, gridDim.x));
  un.direct = false;
  w.pos += un.kb_end - un.kb_begin;
  return true;
}

// The CTA's walk as a loop: f(unit) for each unit (or, with kTail, each whole unit and tail
// piece) in order, until f returns false. Producers and consumers each run it once. k_blocks:
// k_blocks_of() (a tail never comes with act-order weights, so the walk uses p.k_blocks).
template <bool kTail, typename F>
__device__ __forceinline__ void for_each_unit(const Sm90MixedParams& p, int k_blocks, F&& f) {
  if constexpr (kTail) {
    Walk w = walk_begin(p);
    Unit un;
    while (walk_next(p, w, un))
      if (!f(un)) return;
  } else {
    for (int u = blockIdx.x; u < p.units; u += gridDim.x)
      if (!f(unit_of(p, u, k_blocks))) return;
  }
}

// The problem's k blocks of kKB columns: act-order weights have k' packed columns (index[0],
// written when the weights were uploaded, so readable before griddepcontrol.wait), else k.
template <int kKB>
__device__ __forceinline__ int k_blocks_of(const Sm90MixedParams& p) {
  return p.act_index == nullptr ? p.k_blocks : (__ldg(p.act_index) + kKB - 1) / kKB;
}

// Tensor map i of (x, x_last, w, s, z): the parameter, or for act-order weights whose packed
// column count k' (index[0]) differs from k its copy in global memory with the extents of k'
// (sm90_mixed_gemm_act_order_maps(): the host encoded the maps with k), acquired by the calling
// thread, which then issues every TMA copy with it. With k' = k (every group group_size columns
// long: what GPTQ writes) the parameters describe the same extents (session 68: the copies read
// always cost ~2 us per call at m = 64, docs/kernels/mixed_gemm.md v26). Act-order GEMMs run
// without PDL (the family), so the copies are complete when the kernel starts.
__device__ __forceinline__ const CUtensorMap* map_of(const Sm90MixedParams& p, int i, const CUtensorMap* param_map) {
  if (p.act_maps == nullptr || __ldg(p.act_index) == p.k) return param_map;
  ptx::fence_tensormap_acquire(p.act_maps + i);
  return p.act_maps + i;
}

template <typename T, int TK>
__device__ __forceinline__ void wgmma_rs(float (&d)[TK / 2], const uint32_t (&a)[4], uint64_t db) {
  constexpr bool kF16 = std::is_same_v<T, __half>;
  if constexpr (TK == 64) {
    if constexpr (kF16) ptx::wgmma_m64n64k16_f32_f16_rs(d, a, db, true);
    else ptx::wgmma_m64n64k16_f32_bf16_rs(d, a, db, true);
  } else if constexpr (TK == 128) {
    if constexpr (kF16) ptx::wgmma_m64n128k16_f32_f16_rs(d, a, db, true);
    else ptx::wgmma_m64n128k16_f32_bf16_rs(d, a, db, true);
  } else {
    static_assert(TK == 256, "token tiles of 64, 128 or 256");
    if constexpr (kF16) ptx::wgmma_m64n256k16_f32_f16_rs(d, a, db, true);
    else ptx::wgmma_m64n256k16_f32_bf16_rs(d, a, db, true);
  }
}

template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

template <typename T>
__device__ __forceinline__ float to_f32(const void* p, int i) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(static_cast<const __half*>(p)[i]);
  else return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
}

// kTail: the kernel walks a stream-K tail after its whole units (walk_next(); p.sk_tiles > 0),
// a separate instantiation so that the kernels without it keep their code (a run-time tail in
// every kernel cost 7-9% on the plain plans: sm90 v23).
template <typename T, int kBits, int kTK, int kStages, int kKB, bool kTail>
__global__ void __launch_bounds__(384, 1)
    sm90_mixed_gemm_kernel(const __grid_constant__ CUtensorMap tmap_x, const __grid_constant__ CUtensorMap tmap_x_last,
                           const __grid_constant__ CUtensorMap tmap_w, const __grid_constant__ CUtensorMap tmap_s,
                           const __grid_constant__ CUtensorMap tmap_z, const Sm90MixedParams p) {
#if LOWBIT_HAS_SM90A
  using Dec = tiled::TiledDecoder<T, kBits>;
  using Consts = typename Dec::Consts;
  // A stage is kKB = 64 or 128 columns: kSubs sub-blocks of 64 (one group of four k16 wgmmas
  // each), one full / empty barrier round trip per stage.
  constexpr int kSubs = kKB / 64;
  constexpr uint32_t kXSub = kTK * 128;  // one 64-column activation sub-tile (128-byte rows)
  constexpr uint32_t kXTile = kXSub * kSubs;
  constexpr uint32_t kStrip64 = 64 * 16 * kBits / 8;  // a strip's 64 columns: 512 (4-bit), 1024 (8-bit)
  constexpr uint32_t kStripBytes = kStrip64 * kSubs;
  constexpr uint32_t kWTile = 8 * kStripBytes;
  constexpr uint32_t kStageBytes = kXTile + kWTile;
  // The weight tile is one TMA box ([strip][sub-block][64 columns]) where a box row of 256 u32
  // holds a strip's stage, else one box per sub-block ([sub-block][strip][64 columns]: 8-bit
  // stages of 128 columns); w_off(strip, h): a strip's sub-block h in the tile.
  constexpr bool kWOneBox = sm90_mixed_w_one_box(kKB, kBits);
  auto w_off = [](int strip, int h) {
    return kWOneBox ? strip * kStripBytes + h * kStrip64 : (h * 8 + strip) * kStrip64;
  };
  static_assert(kSubs == 1 || kSubs == 2, "stages of 64 or 128 columns");
  // Scale / zero rows of a stage: up to one group row per 32 columns.
  constexpr uint32_t kSzRows = kKB / 32;
  constexpr uint32_t kSzBytes = sm90_mixed_sz_bytes(kKB);
  constexpr int kAcc = kTK / 2;
  // Symmetric zero points z = 2^(bits-1) for both rows of a pair (bytes z(g), z(g+8)).
  constexpr uint32_t kSymZero = (1u << (kBits - 1)) * 0x0101u;
  // Only bf16 x 8-bit has a cheaper decode when the weights are symmetric.
  constexpr bool kSymLoop = std::is_same_v<T, __nv_bfloat16> && kBits == 8;
  // A k block as two groups of two k16 steps (see k_loop) instead of one group of four.
  constexpr bool kHalves = sm90_mixed_halves(kTK, std::is_same_v<T, __nv_bfloat16>, kBits);

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw = ptx::cvta_shared(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // 128-byte swizzle: 1024-byte aligned tiles
  const uint8_t* const gbase = smem_raw + (base - raw);
  // Per stage, the stage's scale rows (sz_rows x 128 channels x 2 bytes) and zero rows
  // (sz_rows x 128 bytes), sz_rows = kKB / group_size, at least 1 (per-channel: group 0).
  const uint32_t sz_base = base + kStages * kStageBytes;
  auto s_row = [&](int s, int r) { return sz_base + s * kSzBytes + r * 256; };
  auto z_row = [&](int s, int r) { return sz_base + s * kSzBytes + kSzRows * 256 + r * 128; };
  const uint32_t bars = sz_base + kStages * kSzBytes;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (kStages + s); };

  const int wg = threadIdx.x / 128;
  const int t = threadIdx.x % 128;
  const int k_blocks = k_blocks_of<kKB>(p);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full(s), 2);
      ptx::mbarrier_init(empty(s), 8);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 2) {
    // ---------------- producer ----------------
    // The kernel is compiled for 168 registers (384 threads, one CTA per SM); the producer
    // keeps 40 and the consumers take 232.
    ptx::setmaxnreg_dec<40>();
    // Stage s of iteration it and its phase bit, as counters (no division per stage).
    struct Ring {
      int s = 0;
      uint32_t ph = 0;
      __device__ void next() {
        if (++s == kStages) {
          s = 0;
          ph ^= 1u;
        }
      }
    };
    // With zero points the weight thread issues three TMAs per stage (weights, scales, zero
    // points), the longest per-stage chain of the producers (v16 (h): ~240 clocks + ~80 per
    // TMA): that role then runs on threads 0 and 64, one for the even iterations, one for the
    // odd. Without zero points thread 0 takes every iteration.
    const bool split_w = p.zeros != nullptr;
    // Iteration `it` is this thread's when (it & w_mask) == w_parity (no division per stage).
    const uint32_t w_mask = split_w ? 1u : 0u, w_parity = static_cast<uint32_t>(t >> 6) & w_mask;
    if (t == 0 || (t == 64 && split_w)) {
      // ---- weights, scales, zero points ----
      const CUtensorMap* const map_w = map_of(p, 2, &tmap_w);
      const CUtensorMap* const map_s = map_of(p, 3, &tmap_s);
      const CUtensorMap* const map_z = p.zeros != nullptr ? map_of(p, 4, &tmap_z) : &tmap_z;
      ptx::tma_prefetch_descriptor(map_w);
      ptx::tma_prefetch_descriptor(map_s);
      if (p.zeros != nullptr) ptx::tma_prefetch_descriptor(map_z);
      // This thread's bytes of a stage: the weight tile, the scale rows, the zero rows.
      const uint32_t tx = kWTile + p.sz_rows * (256 + (p.zeros != nullptr ? 128 : 0));
      // The model's constants of stage s, iteration kb of unit un: weight tile, scale and zero
      // rows (the first group row of the k block; groups of 32: rows 2 kb, 2 kb + 1 in one box).
      auto load_const = [&](int s, const Unit& un, int kb) {
        const uint32_t st = base + s * kStageBytes;
        if constexpr (kWOneBox) {
          ptx::tma_load_2d(st + kXTile, map_w, kb * kSubs * 32 * kBits, un.tile_c * 8, full(s));
        } else {
#pragma unroll
          for (int h = 0; h < kSubs; ++h)
            ptx::tma_load_2d(st + kXTile + w_off(0, h), map_w, (kb * kSubs + h) * 32 * kBits, un.tile_c * 8, full(s));
        }
        const int grow = p.group_size == 0 ? 0 : (kb * kKB) >> p.group_shift;
        ptx::tma_load_2d(s_row(s, 0), map_s, un.tile_c * kSm90MixedBlockCh, grow, full(s));
        if (p.zeros != nullptr) ptx::tma_load_2d(z_row(s, 0), map_z, un.tile_c * kSm90MixedBlockCh, grow, full(s));
      };
      // PDL (session 18): the constants of the first `pre` iterations (at most one per stage:
      // no empty-barrier wait) before griddepcontrol.wait; the activation tiles, which the
      // previous kernel may write, after it (thread 32). Without the
      // launch attribute the wait returns at once. The plan caps `pre` (p.pre_stages, session
      // 30): the activation tiles requested after the wait queue behind every weight request
      // still in flight, and the first k block needs both, so fewer weight stages before the
      // wait let the first wgmma start sooner (docs/kernels/mixed_gemm.md, sm90 v11).
      uint32_t pre = 0;
      const uint32_t pre_max = p.pre_stages > 0 && p.pre_stages < kStages ? p.pre_stages : kStages;
      for_each_unit<kTail>(p, k_blocks, [&](const Unit& un) {
        for (int kb = un.kb_begin; kb < un.kb_end && pre < pre_max; ++kb, ++pre) {
          if ((pre & w_mask) != w_parity) continue;
          ptx::mbarrier_arrive_expect_tx(full(static_cast<int>(pre)), tx);
          load_const(static_cast<int>(pre), un, kb);
        }
        return pre < pre_max;
      });
      ptx::griddep_launch_dependents();
      ptx::griddep_wait();
      uint32_t it = 0;
      Ring ring;
      for_each_unit<kTail>(p, k_blocks, [&](const Unit& un) {
        for (int kb = un.kb_begin; kb < un.kb_end; ++kb, ++it, ring.next()) {
          if (it < pre || (it & w_mask) != w_parity) continue;
          if (it >= kStages) ptx::mbarrier_wait_parity(empty(ring.s), ring.ph ^ 1u);
          ptx::mbarrier_arrive_expect_tx(full(ring.s), tx);
          load_const(ring.s, un, kb);
        }
        return true;
      });
    } else if (t == 32) {
      // ---- activations: written by the previous kernel, so after griddepcontrol.wait ----
      const CUtensorMap* const map_x = map_of(p, 0, &tmap_x);
      const CUtensorMap* const map_x_last = map_of(p, 1, &tmap_x_last);
      ptx::tma_prefetch_descriptor(map_x);
      ptx::tma_prefetch_descriptor(map_x_last);
      ptx::griddep_launch_dependents();
      ptx::griddep_wait();
      uint32_t it = 0;
      Ring ring;
      for_each_unit<kTail>(p, k_blocks, [&](const Unit& un) {
        // The last token tile's boxes hold only its rows (rounded up to 8), from its own map.
        const bool last = un.tile_t == p.tiles_t - 1;
        const CUtensorMap* map = last ? map_x_last : map_x;
        const uint32_t x_tx = (last ? p.x_last_rows : kTK) * 128u * kSubs;
        for (int kb = un.kb_begin; kb < un.kb_end; ++kb, ++it, ring.next()) {
          if (it >= kStages) ptx::mbarrier_wait_parity(empty(ring.s), ring.ph ^ 1u);
          ptx::mbarrier_arrive_expect_tx(full(ring.s), x_tx);
#pragma unroll
          for (int h = 0; h < kSubs; ++h)
            ptx::tma_load_2d(base + ring.s * kStageBytes + h * kXSub, map, (kb * kSubs + h) * kSm90MixedBlockK,
                             un.tile_t * kTK, full(ring.s));
        }
        return true;
      });
    }
    return;
  }

  // ---------------- consumers ----------------
  ptx::setmaxnreg_inc<232>();
  // PDL: the consumers read the bias and write the output or the split-K workspace, which the
  // previous kernel may touch: after its completion.
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  const int warp = t / 32, lane = t % 32;
  const int g = lane / 4, tq = lane % 4;
  const int strip_in_tile = 4 * wg + warp;
  const int strips = p.n / 16;
  const int gs = p.group_size;
  const bool has_zeros = p.zeros != nullptr;
  const uint32_t* const scales32 = static_cast<const uint32_t*>(p.scales);  // the epilogue's per-channel scales
  float acc[kAcc];
  uint32_t a0[4][4], a1[4][4];
  uint32_t it = 0;

  for_each_unit<kTail>(p, k_blocks, [&](const Unit& un) {
    const int strip_g = un.tile_c * 8 + strip_in_tile;
    // Scale / zero loads of strips past n (a 64-channel tail tile) read the last strip's:
    // finite values for channels that are never stored.
    const int64_t pair = int64_t(min(strip_g, strips - 1)) * 16 + 2 * g;  // element of (g, g+8)
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;

    // Scale and zero pairs of sub-block h of stage s (read after its full barrier): [0] for its
    // columns 0..31, [1] for 32..63, i.e. the stage's 32-column quarters 2h and 2h + 1, whose
    // rows are q >> (group_shift - 5) (rows differ only within a sub-block with groups of 32).
    // Per-channel: the zero pair of group 0 (row 0), no scale. Element (strip_in_tile * 16 + 2 g)
    // of a row is the pair (g, g+8).
    const uint32_t pair_in_row = strip_in_tile * 16 + 2 * g;
    const int row_shift = gs == 0 ? 5 : p.group_shift - 5;
    auto load_sz = [&](int s, int h, uint32_t (&sp)[2], uint32_t (&zp)[2]) {
      const int r0 = (2 * h) >> row_shift, r1 = (2 * h + 1) >> row_shift;
      sp[0] = ptx::ld_shared_u32(s_row(s, r0) + 2 * pair_in_row);
      sp[1] = ptx::ld_shared_u32(s_row(s, r1) + 2 * pair_in_row);
      zp[0] = has_zeros ? ptx::ld_shared_u16(z_row(s, r0) + pair_in_row) : kSymZero;
      zp[1] = has_zeros ? ptx::ld_shared_u16(z_row(s, r1) + pair_in_row) : kSymZero;
    };

    // Sub-block h of stage s (its full barrier passed): decode this warp's strip into `a`,
    // issue the four wgmmas (one group), retire the previous group.
    auto sub = [&](auto h_c, auto scale_c, auto sym_c, uint32_t (&a)[4][4], int s) {
      constexpr int h = decltype(h_c)::value;
      constexpr bool kScale = decltype(scale_c)::value;
      constexpr bool kSym = decltype(sym_c)::value;
      const uint8_t* wst = gbase + s * kStageBytes + kXTile + w_off(strip_in_tile, h) + lane * 16;
      const uint4 q0 = *reinterpret_cast<const uint4*>(wst);
      uint32_t sp[2], zp[2];
      load_sz(s, h, sp, zp);
      Consts c0, c1;
      if constexpr (kSym) {
        c0 = Dec::make_consts(kSymZero, sp[0], kScale);
        c1 = Dec::make_consts(kSymZero, sp[1], kScale);
      } else {
        c0 = Dec::make_consts(zp[0], sp[0], kScale);
        c1 = Dec::make_consts(zp[1], sp[1], kScale);
      }
      if constexpr (kBits == 4) {
        Dec::template step<0, kScale, kSym>(q0, c0, a[0]);
        Dec::template step<1, kScale, kSym>(q0, c0, a[1]);
        Dec::template step<2, kScale, kSym>(q0, c1, a[2]);
        Dec::template step<3, kScale, kSym>(q0, c1, a[3]);
      } else {
        const uint4 q1 = *reinterpret_cast<const uint4*>(wst + 512);
        Dec::template step<0, kScale, kSym>(q0, c0, a[0]);
        Dec::template step<1, kScale, kSym>(q0, c0, a[1]);
        Dec::template step<0, kScale, kSym>(q1, c1, a[2]);
        Dec::template step<1, kScale, kSym>(q1, c1, a[3]);
      }
      const uint64_t db = ptx::wgmma_desc_k_major_sw128(base + s * kStageBytes + h * kXSub);
      ptx::wgmma_fence_operand(acc);
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) wgmma_rs<T, kTK>(acc, a[kk], db + 2 * kk);
      ptx::wgmma_commit_group();
      ptx::wgmma_wait_group<1>();
      ptx::wgmma_fence_operand(acc);
    };
    // One 64-column stage: wait for it, then its one sub-block.
    auto block = [&](auto scale_c, auto sym_c, uint32_t (&a)[4][4], uint32_t i_it) {
      const int s = static_cast<int>(i_it % kStages);
      ptx::mbarrier_wait_parity(full(s), (i_it / kStages) & 1);
      sub(std::integral_constant<int, 0>{}, scale_c, sym_c, a, s);
    };
    auto release = [&](uint32_t i_it) {
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(empty(static_cast<int>(i_it % kStages)));
    };

    // kHalves (kTK = 256: 128 accumulators; bf16 x 8-bit from kTK = 128: its decode through
    // f32 needs more temporaries): registers for two whole-block A buffers are not there
    // (ptxas serializes the wgmmas, C7512), so a k block goes as two halves of two k16 steps, each
    // its own group, half h always in buffer h: the wait after half 0 of block i retires half
    // 1 of block i - 1 (its stage is released), the wait after half 1 retires half 0.
    auto half = [&](auto h_c, auto scale_c, auto sym_c, uint32_t (&a)[4][4], const uint4& q, const Consts& c,
                    uint64_t db) {
      constexpr int h = decltype(h_c)::value;
      constexpr bool kScale = decltype(scale_c)::value;
      constexpr bool kSym = decltype(sym_c)::value;
      if constexpr (kBits == 4) {
        Dec::template step<2 * h, kScale, kSym>(q, c, a[0]);
        Dec::template step<2 * h + 1, kScale, kSym>(q, c, a[1]);
      } else {
        Dec::template step<0, kScale, kSym>(q, c, a[0]);
        Dec::template step<1, kScale, kSym>(q, c, a[1]);
      }
      ptx::wgmma_fence_operand(acc);
      ptx::wgmma_fence();
      wgmma_rs<T, kTK>(acc, a[0], db + 4 * h);
      wgmma_rs<T, kTK>(acc, a[1], db + 4 * h + 2);
      ptx::wgmma_commit_group();
      ptx::wgmma_wait_group<1>();
      ptx::wgmma_fence_operand(acc);
    };

    const int nk = un.kb_end - un.kb_begin;
    auto k_loop = [&](auto scale_c, auto sym_c) {
      if constexpr (kHalves) {
        constexpr bool kSym = decltype(sym_c)::value;
        // 128-column stages: the two sub-blocks' halves in turn (a0, a1, a0, a1); each wait
        // retires the group before the previous one, i.e. the last reader of the buffer about
        // to be written, and the one after stage i's first half retires stage i - 1's last.
        for (int i = 0; i < nk; ++i) {
          const uint32_t i_it = it + i;
          const int s = static_cast<int>(i_it % kStages);
          ptx::mbarrier_wait_parity(full(s), (i_it / kStages) & 1);
#pragma unroll
          for (int h = 0; h < kSubs; ++h) {
            const uint8_t* wst = gbase + s * kStageBytes + kXTile + w_off(strip_in_tile, h) + lane * 16;
            const uint4 q0 = *reinterpret_cast<const uint4*>(wst);
            const uint4 q1 = kBits == 8 ? *reinterpret_cast<const uint4*>(wst + 512) : q0;
            uint32_t sp[2], zp[2];
            load_sz(s, h, sp, zp);
            const Consts c0 = Dec::make_consts(kSym ? kSymZero : zp[0], sp[0], decltype(scale_c)::value);
            const Consts c1 = Dec::make_consts(kSym ? kSymZero : zp[1], sp[1], decltype(scale_c)::value);
            const uint64_t db = ptx::wgmma_desc_k_major_sw128(base + s * kStageBytes + h * kXSub);
            half(std::integral_constant<int, 0>{}, scale_c, sym_c, a0, q0, c0, db);
            if (h == 0 && i > 0) release(i_it - 1);
            half(std::integral_constant<int, 1>{}, scale_c, sym_c, a1, q1, c1, db);
          }
        }
      } else if constexpr (kSubs == 2) {
        // 128-column stages: sub-block 0 in a0, 1 in a1; the wait after sub-block 0 of stage i
        // retires stage i - 1's last group, so its stage is released there.
        for (int i = 0; i < nk; ++i) {
          const uint32_t i_it = it + i;
          const int s = static_cast<int>(i_it % kStages);
          ptx::mbarrier_wait_parity(full(s), (i_it / kStages) & 1);
          sub(std::integral_constant<int, 0>{}, scale_c, sym_c, a0, s);
          if (i > 0) release(i_it - 1);
          sub(std::integral_constant<int, 1>{}, scale_c, sym_c, a1, s);
        }
      } else {
        int i = 0;
        for (; i + 1 < nk; i += 2) {
          block(scale_c, sym_c, a0, it + i);
          if (i > 0) release(it + i - 1);
          block(scale_c, sym_c, a1, it + i + 1);
          release(it + i);
        }
        if (i < nk) {
          block(scale_c, sym_c, a0, it + i);
          if (i > 0) release(it + i - 1);
        }
      }
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(acc);
      release(it + nk - 1);
    };
    const bool sym_loop = kSymLoop && !has_zeros;
    if (gs != 0) {
      if (sym_loop) k_loop(std::true_type{}, std::true_type{});
      else k_loop(std::true_type{}, std::false_type{});
    } else {
      if (sym_loop) k_loop(std::false_type{}, std::true_type{});
      else k_loop(std::false_type{}, std::false_type{});
    }
    it += nk;

    // ---------------- epilogue ----------------
    // acc[4j + 2h + e] = channel 16 strip_g + g + 8h, token 8j + 2tq + e. Lanes g and g ^ 1
    // (lane ^ 4) hold adjacent channels: each sends the partner the token it does not
    // store, so every lane writes two adjacent channels of one token (32 bits; 64 for fp32
    // partials): even g token 8j + 2tq, channels (c, c + 1); odd g token 8j + 2tq + 1,
    // channels (c - 1, c).
    // The stream-K tail's pieces store fp32 partials (un.direct false).
    const bool single = kTail ? un.direct : p.splits == 1;
    float sc[2] = {1.f, 1.f}, bi[2] = {0.f, 0.f};
    if (single) {
      if (gs == 0) tiled::scale_pair_to_f32<T>(__ldg(scales32 + pair / 2), sc[0], sc[1]);
      if (p.bias != nullptr) {
        const int ch = min(strip_g, strips - 1) * 16 + g;
        bi[0] = to_f32<T>(p.bias, ch);
        bi[1] = to_f32<T>(p.bias, ch + 8);
      }
    }
    const bool odd = (g & 1) != 0;
    const bool strip_ok = strip_g < strips;
    const int t0 = un.tile_t * kTK;
#pragma unroll
    for (int j = 0; j < kTK / 8; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v0 = fmaf(acc[4 * j + 2 * h], sc[h], bi[h]);
        const float v1 = fmaf(acc[4 * j + 2 * h + 1], sc[h], bi[h]);
        const float recv = __shfl_xor_sync(0xffffffffu, odd ? v0 : v1, 4);
        const int row = t0 + 8 * j + 2 * tq + (odd ? 1 : 0);
        const int col = strip_g * 16 + g + 8 * h - (odd ? 1 : 0);
        if (!strip_ok || row >= p.m) continue;
        const float lo = odd ? recv : v0, hi = odd ? v1 : recv;
        if (single) {
          reinterpret_cast<uint32_t*>(p.out)[(int64_t(row) * p.n + col) / 2] = pack2<T>(lo, hi);
        } else {
          const int64_t idx = kTail ? (int64_t(un.split) * p.m + row) * p.part_ld + col - p.part_col0
                                    : (int64_t(un.split) * p.m + row) * p.n + col;
          *reinterpret_cast<float2*>(p.partial + idx) = make_float2(lo, hi);
        }
      }
    }
    return true;
  });
#else
  LOWBIT_DEVICE_TRAP("sm90_mixed_gemm_kernel needs sm_90a");
#endif
}

}  // namespace lowbit::cuda::sm90mixed
