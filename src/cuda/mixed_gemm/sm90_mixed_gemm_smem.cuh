// The Hopper mixed GEMM kernel with the dequantized weights in SHARED MEMORY (sm_90a): the
// `smem_w` configurations of sm90_mixed_gemm (tags d*). Same problems, tiled layout, TMA
// loads and persistent (tile, split) walk as the register-operand kernel
// (sm90_mixed_gemm.cuh); design and numbers: docs/kernels/mixed_gemm.md, "sm90_mixed_gemm".
//
// Orientation: out = X * W^T, the ordinary one. The wgmma M (64) is tokens, its N (kChW = 64
// or 128) output channels, its K the reduction. Why: at small m the register-operand kernel
// issues one wgmma of 64 channels x m tokens per k16 step and pays a fixed cost per wgmma
// that the few tokens cannot amortize; here every wgmma is 64 tokens x kChW channels.
//
// Warpgroups: two consumers and the producer (index 2). Consumer c owns channels
// c kChW .. (c + 1) kChW - 1 of the tile (strips c kChW / 16 + warp + 4 j) and every token of
// it (kTM = 64 or 128: one or two wgmmas per k16 step).
// - Producer: one thread issues, per stage s (one k block of 64 columns), the TMA loads of X
//   (kTM rows x 128 bytes, 128-byte swizzle, rows past m zero-filled), W (2 kChW / 16 strips
//   x the k block's 128 x bits bytes, strips past n zero-filled) and the k block's scale /
//   zero rows (sz_rows x 2 kChW), as the register kernel.
// - Consumer, per k block: wait full[s]; each warp decodes its strips with TiledDecoder (the
//   sm80 / register kernels' exact decode: grouped weights (q - z) * s rounded once to T,
//   per-channel weights the exact integers q - z, their scale applied in fp32 after the k
//   loop) and stores each k16 step's fragment as a 16 x 16 tile with one stmatrix.x4 into
//   the consumer's dequantized tile b = it % 2 (kChW rows = channels x 64 k = 128 bytes,
//   K-major with the 128-byte swizzle: what a TMA load of a (kChW, 64) 16-bit box writes);
//   every thread fences its generic-proxy stores for the async proxy (the tensor core reads
//   the tile through a descriptor) and the warpgroup meets at its named barrier; then four
//   k16 steps of wgmma (A = X, B = tile b) as one commit group, and wgmma.wait_group 1: the
//   previous block's group has retired, so its stage is released (empty[s], one arrive per
//   consumer warp: count 8) and its tile may be rewritten by the next block's decode, which
//   thus overlaps this block's wgmmas.
// Barriers: full[s] count 1 (arrive.expect_tx + TMA bytes); empty[s] count 8; named barrier
// 1 + c per consumer (128 threads).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/dequant/sm80_tiled_decode.cuh"
#include "cuda/mixed_gemm/sm90_mixed_gemm.cuh"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"
#include "cuda/ptx/cp_async_bulk.cuh"
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_shared.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/named_barrier.cuh"
#include "cuda/ptx/smxx_config.hpp"
#include "cuda/ptx/stmatrix.cuh"
#include "cuda/ptx/tma.cuh"
#include "cuda/ptx/wgmma.cuh"
#include "cuda/ptx/wgmma_ss16.cuh"

namespace lowbit::cuda::sm90mixed {

template <typename T, int kN>
__device__ __forceinline__ void wgmma_ss(float (&d)[kN / 2], uint64_t da, uint64_t db) {
  constexpr bool kF16 = std::is_same_v<T, __half>;
  if constexpr (kN == 64) {
    if constexpr (kF16) ptx::wgmma_m64n64k16_f32_f16_ss(d, da, db, true);
    else ptx::wgmma_m64n64k16_f32_bf16_ss(d, da, db, true);
  } else {
    static_assert(kN == 128, "channel halves of 64 or 128");
    if constexpr (kF16) ptx::wgmma_m64n128k16_f32_f16_ss(d, da, db, true);
    else ptx::wgmma_m64n128k16_f32_bf16_ss(d, da, db, true);
  }
}

template <typename T, int kBits, int kChW, int kTM, int kStages>
__global__ void __launch_bounds__(384, 1)
    sm90_mixed_gemm_smem_kernel(const __grid_constant__ CUtensorMap tmap_x, const __grid_constant__ CUtensorMap tmap_w,
                                const __grid_constant__ CUtensorMap tmap_s, const __grid_constant__ CUtensorMap tmap_z,
                                const Sm90MixedParams p) {
#if LOWBIT_HAS_SM90A
  using Dec = tiled::TiledDecoder<T, kBits>;
  using Consts = typename Dec::Consts;
  constexpr int kCh = 2 * kChW;
  constexpr int kTms = kTM / 64;  // wgmmas per k16 step
  constexpr uint32_t kXTile = kTM * 128;
  constexpr uint32_t kStripBytes = kSm90MixedBlockK * 16 * kBits / 8;  // 512 (4-bit), 1024 (8-bit)
  constexpr int kStrips = kCh / 16;
  constexpr int kStripsPerWarp = kChW / 64;
  constexpr uint32_t kWTile = kStrips * kStripBytes;
  constexpr uint32_t kStageBytes = kXTile + kWTile;
  constexpr uint32_t kSzBytes = 6 * kCh;  // 2 scale rows (4 kCh bytes) + 2 zero rows (2 kCh)
  constexpr uint32_t kDecBytes = kChW * 128;
  constexpr int kAcc = kChW / 2;
  constexpr uint32_t kSymZero = (1u << (kBits - 1)) * 0x0101u;
  constexpr bool kSymLoop = std::is_same_v<T, __nv_bfloat16> && kBits == 8;
  static_assert(kTM == 64 || kTM == 128, "one or two wgmmas of 64 tokens per k16 step");

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw = ptx::cvta_shared(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // 128-byte swizzle: 1024-byte aligned tiles
  const uint8_t* const gbase = smem_raw + (base - raw);
  const uint32_t dec_base = base + kStages * kStageBytes;  // consumer c, tile b: + (2 c + b) kDecBytes
  const uint32_t sz_base = dec_base + 4 * kDecBytes;
  auto s_row = [&](int s, int h) { return sz_base + s * kSzBytes + h * 2 * kCh; };
  auto z_row = [&](int s, int h) { return sz_base + s * kSzBytes + 4 * kCh + h * kCh; };
  const uint32_t bars = sz_base + kStages * kSzBytes;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (kStages + s); };
  static_assert(kStageBytes % 1024 == 0 && kDecBytes % 1024 == 0, "swizzled tiles stay 1024-byte aligned");
  static_assert(kSzBytes % 128 == 0, "TMA destinations stay 128-byte aligned");

  const int wg = threadIdx.x / 128;
  const int t = threadIdx.x % 128;
  const int warp = t / 32, lane = t % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full(s), 1);
      ptx::mbarrier_init(empty(s), 8);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 2) {
    // ---------------- producer ----------------
    ptx::setmaxnreg_dec<40>();
    if (t == 0) {
      ptx::tma_prefetch_descriptor(&tmap_x);
      ptx::tma_prefetch_descriptor(&tmap_w);
      ptx::tma_prefetch_descriptor(&tmap_s);
      if (p.zeros != nullptr) ptx::tma_prefetch_descriptor(&tmap_z);
      const uint32_t tx = kStageBytes + p.sz_rows * (2 * kCh + (p.zeros != nullptr ? kCh : 0));
      auto load_const = [&](int s, const Unit& un, int kb) {
        const uint32_t st = base + s * kStageBytes;
        ptx::tma_load_2d(st + kXTile, &tmap_w, kb * 32 * kBits, un.tile_c * kStrips, full(s));
        const int grow = p.group_size == 0 ? 0 : (kb * kSm90MixedBlockK) / p.group_size;
        ptx::tma_load_2d(s_row(s, 0), &tmap_s, un.tile_c * kCh, grow, full(s));
        if (p.zeros != nullptr) ptx::tma_load_2d(z_row(s, 0), &tmap_z, un.tile_c * kCh, grow, full(s));
      };
      // PDL, as in the register kernel: the constants of the first kStages iterations before
      // griddepcontrol.wait, the activation tiles after it.
      uint32_t pre = 0;
      for (int u = blockIdx.x; u < p.units && pre < static_cast<uint32_t>(kStages); u += gridDim.x) {
        const Unit un = unit_of(p, u);
        for (int kb = un.kb_begin; kb < un.kb_end && pre < static_cast<uint32_t>(kStages); ++kb, ++pre) {
          ptx::mbarrier_arrive_expect_tx(full(static_cast<int>(pre)), tx);
          load_const(static_cast<int>(pre), un, kb);
        }
      }
      ptx::griddep_launch_dependents();
      ptx::griddep_wait();
      uint32_t it = 0;
      for (int u = blockIdx.x; u < p.units; u += gridDim.x) {
        const Unit un = unit_of(p, u);
        for (int kb = un.kb_begin; kb < un.kb_end; ++kb, ++it) {
          const int s = static_cast<int>(it % kStages);
          const uint32_t r = it / kStages;
          if (it >= pre) {
            if (r > 0) ptx::mbarrier_wait_parity(empty(s), (r - 1) & 1);
            ptx::mbarrier_arrive_expect_tx(full(s), tx);
            load_const(s, un, kb);
          }
          ptx::tma_load_2d(base + s * kStageBytes, &tmap_x, kb * kSm90MixedBlockK, un.tile_t * kTM, full(s));
        }
      }
    }
    return;
  }

  // ---------------- consumers ----------------
  ptx::setmaxnreg_inc<232>();
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();  // before reading the bias and writing the output
  const int g = lane / 4, tq = lane % 4;
  const int gs = p.group_size;
  const bool has_zeros = p.zeros != nullptr;
  const int h1 = gs == 32 ? 1 : 0;
  // stmatrix address of this lane inside a 16 x 16 tile (see ptx/stmatrix.cuh): row
  // 8 ((lane / 8) % 2) + lane % 8 of the strip, 16-byte chunk (lane / 16) of the k16 step.
  const int st_row = ((lane >> 3) & 1) * 8 + (lane & 7);
  const int st_half = lane >> 4;
  const uint32_t my_dec = dec_base + 2 * wg * kDecBytes;
  float acc[kTms][kAcc];
  uint32_t it = 0;
  auto release = [&](uint32_t i_it) {
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(empty(static_cast<int>(i_it % kStages)));
  };

  // One k block: decode this warp's strips of stage s into tile b, publish the tile to the
  // tensor core, issue the wgmmas, retire the previous block's group.
  auto block = [&](auto scale_c, auto sym_c, uint32_t i_it) {
    constexpr bool kScale = decltype(scale_c)::value;
    constexpr bool kSym = decltype(sym_c)::value;
    const int s = static_cast<int>(i_it % kStages);
    const uint32_t dtile = my_dec + (i_it & 1) * kDecBytes;
    ptx::mbarrier_wait_parity(full(s), (i_it / kStages) & 1);
    // All loads of the block first (the stores below are volatile and would fence them).
    uint4 q0[kStripsPerWarp], q1[kStripsPerWarp];
    uint32_t sp0[kStripsPerWarp], sp1[kStripsPerWarp], zp0[kStripsPerWarp], zp1[kStripsPerWarp];
#pragma unroll
    for (int j = 0; j < kStripsPerWarp; ++j) {
      const int strip = wg * (kChW / 16) + warp + 4 * j;  // in the CTA tile
      const uint8_t* wst = gbase + s * kStageBytes + kXTile + strip * kStripBytes + lane * 16;
      q0[j] = *reinterpret_cast<const uint4*>(wst);
      q1[j] = kBits == 8 ? *reinterpret_cast<const uint4*>(wst + 512) : q0[j];
      const uint32_t pair_in_row = strip * 16 + 2 * g;
      sp0[j] = ptx::ld_shared_u32(s_row(s, 0) + 2 * pair_in_row);
      sp1[j] = ptx::ld_shared_u32(s_row(s, h1) + 2 * pair_in_row);
      zp0[j] = has_zeros && !kSym ? ptx::ld_shared_u16(z_row(s, 0) + pair_in_row) : kSymZero;
      zp1[j] = has_zeros && !kSym ? ptx::ld_shared_u16(z_row(s, h1) + pair_in_row) : kSymZero;
    }
#pragma unroll
    for (int j = 0; j < kStripsPerWarp; ++j) {
      const Consts c0 = Dec::make_consts(zp0[j], sp0[j], kScale);
      const Consts c1 = Dec::make_consts(zp1[j], sp1[j], kScale);
      uint32_t a[4][4];
      if constexpr (kBits == 4) {
        Dec::template step<0, kScale, kSym>(q0[j], c0, a[0]);
        Dec::template step<1, kScale, kSym>(q0[j], c0, a[1]);
        Dec::template step<2, kScale, kSym>(q0[j], c1, a[2]);
        Dec::template step<3, kScale, kSym>(q0[j], c1, a[3]);
      } else {
        Dec::template step<0, kScale, kSym>(q0[j], c0, a[0]);
        Dec::template step<1, kScale, kSym>(q0[j], c0, a[1]);
        Dec::template step<0, kScale, kSym>(q1[j], c1, a[2]);
        Dec::template step<1, kScale, kSym>(q1[j], c1, a[3]);
      }
      const int row = (warp + 4 * j) * 16 + st_row;  // in this consumer's tile
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const int chunk = 2 * kk + st_half;
        ptx::stmatrix_x4(dtile + row * 128 + ((chunk ^ (row & 7)) << 4), a[kk]);
      }
    }
    ptx::fence_proxy_async_shared();
    ptx::named_barrier_sync(1 + wg, 128);
    const uint64_t db = ptx::wgmma_desc_k_major_sw128(dtile);
    // Token rows 64 tm .. 64 tm + 63 start 64 x 128 bytes further: + 512 in the address field.
    const uint64_t da = ptx::wgmma_desc_k_major_sw128(base + s * kStageBytes);
#pragma unroll
    for (int tm = 0; tm < kTms; ++tm) ptx::wgmma_fence_operand(acc[tm]);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int tm = 0; tm < kTms; ++tm) wgmma_ss<T, kChW>(acc[tm], da + (64 * 128 >> 4) * tm + 2 * kk, db + 2 * kk);
    ptx::wgmma_commit_group();
    ptx::wgmma_wait_group<1>();
#pragma unroll
    for (int tm = 0; tm < kTms; ++tm) ptx::wgmma_fence_operand(acc[tm]);
  };

  for (int u = blockIdx.x; u < p.units; u += gridDim.x) {
    const Unit un = unit_of(p, u);
#pragma unroll
    for (int tm = 0; tm < kTms; ++tm)
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[tm][i] = 0.f;
    const int nk = un.kb_end - un.kb_begin;
    auto k_loop = [&](auto scale_c, auto sym_c) {
      for (int i = 0; i < nk; ++i) {
        block(scale_c, sym_c, it + i);
        if (i > 0) release(it + i - 1);
      }
      ptx::wgmma_wait_group<0>();
#pragma unroll
      for (int tm = 0; tm < kTms; ++tm) ptx::wgmma_fence_operand(acc[tm]);
      if (nk > 0) release(it + nk - 1);
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
    // acc[tm][4j + 2h + e] = token 64 tm + 16 warp + g + 8h of the tile, channel
    // wg kChW + 8j + 2tq + e: every lane holds pairs of adjacent channels of one token (one
    // 32-bit store each).
    const bool single = p.splits == 1;
    const int c0 = un.tile_c * kCh + wg * kChW + 2 * tq;
#pragma unroll
    for (int j = 0; j < kChW / 8; ++j) {
      const int col = c0 + 8 * j;
      if (col >= p.n) continue;  // n is a multiple of 64: a pair is inside or outside
      float sc[2] = {1.f, 1.f}, bi[2] = {0.f, 0.f};
      if (single) {
        if (gs == 0) {
          // Per-channel scales in the pair order: channel 16 s + r + 8 h is element 16 s + 2 r + h.
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int ch = col + e;
            sc[e] = to_f32<T>(p.scales, (ch & ~15) + 2 * (ch & 7) + ((ch >> 3) & 1));
          }
        }
        if (p.bias != nullptr) {
          bi[0] = to_f32<T>(p.bias, col);
          bi[1] = to_f32<T>(p.bias, col + 1);
        }
      }
#pragma unroll
      for (int tm = 0; tm < kTms; ++tm)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = un.tile_t * kTM + 64 * tm + 16 * warp + g + 8 * h;
          if (row >= p.m) continue;
          const float v0 = fmaf(acc[tm][4 * j + 2 * h], sc[0], bi[0]);
          const float v1 = fmaf(acc[tm][4 * j + 2 * h + 1], sc[1], bi[1]);
          if (single) {
            reinterpret_cast<uint32_t*>(p.out)[(int64_t(row) * p.n + col) / 2] = pack2<T>(v0, v1);
          } else {
            const int64_t idx = (int64_t(un.split) * p.m + row) * p.n + col;
            *reinterpret_cast<float2*>(p.partial + idx) = make_float2(v0, v1);
          }
        }
    }
  }
#else
  LOWBIT_DEVICE_TRAP("sm90_mixed_gemm_smem_kernel needs sm_90a");
#endif
}

}  // namespace lowbit::cuda::sm90mixed
