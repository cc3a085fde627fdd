// The sm89 fp8 GEMM kernel: out(m, n) = epilogue(sum_k A(m, k) W(n, k)), A and W e4m3fn
// (K-major, layout "fp8_nk"), fp32 accumulation with mma.sync.m16n8k32.e4m3 (ptx/mma_fp8.cuh),
// f16 / bf16 output. Runs on sm_89 (Ada) and sm_90 (Hopper; there it is the small-m kernel
// and the split-K reduction uses thread-block clusters). Design and numerics:
// docs/kernels/fp8_gemm.md, "sm89_fp8_gemm".
//
// The same template over int8 operands (ELEM = Sm89Fp8Element::kInt8) is the sm80_int8_gemm
// family (W8A8, docs/kernels/int8_gemm.md, "sm80_int8_gemm"; sm_80+): the copies, the
// swizzle, the ldmatrix fragments and the tile schedule are byte-for-byte those of e4m3
// (mma.m16n8k32 s8.s8 has the e4m3 fragment layout, ptx/mma_int8.cuh); only the mma and the
// accumulator differ (int32 accumulated straight across the split's k: integer sums are
// exact, so no per-block promotion), and the epilogue converts the int32 tile once
// (sm89_fp8_gemm_epilogue.cuh, "int8").
//
// One CTA computes a BLOCK_N (channels) x BLOCK_M (tokens) tile of out^T over the k range of
// its split (blockIdx.z): the weights are the mma A operand, the activations the B operand.
// Per pipeline stage of BLOCK_K columns it copies with 16-byte cp.async:
//   W   BLOCK_N rows x BLOCK_K bytes;
//   X   min(m, BLOCK_M) activation rows x BLOCK_K bytes (decode copies one row, not 8);
//   SA  block mode: the stage's BLOCK_K/128 rows of BLOCK_M activation scales;
//   SW  block mode: a 16-byte-aligned window of the tile's weight-scale row holding the
//       stage's BLOCK_K/128 scales.
// Columns past the split's end (k % BLOCK_K != 0) are zero-filled in both operands; weight
// rows past n and token rows past m are not copied (they only feed outputs that are dropped).
//
// Fragments by ldmatrix (ptx/ldmatrix.cuh): an 8 x 8 matrix of b16 is 8 rows x 16 bytes, and
// lane l receives bytes 4 (l % 4) .. +3 of row l / 4: exactly an 8-bit mma fragment register
// (4 consecutive k of one row). For a 16 x 32 A tile, ldmatrix.x4 of (rows 0-7, k 0-15),
// (rows 8-15, k 0-15), (rows 0-7, k 16-31), (rows 8-15, k 16-31) gives a[0..3] in order; for
// an 8-token B block, ldmatrix.x4 of k units 0..3 (64 bytes) gives b[0], b[1] of two k32
// steps. One ldmatrix.x4 per 512 bytes, registers already in mma order.
//
// Shared-memory layout: rows of BLOCK_K bytes, 16-byte unit u of row r stored at unit
// u ^ (r & 7) (XOR swizzle inside each 128-byte group of 8 units). The 8 row addresses of
// one ldmatrix matrix (8 consecutive rows, one logical unit) then fall in 8 distinct 16-byte
// bank groups: conflict-free. Token rows past the tile's m are never copied; their ldmatrix
// addresses are clamped to the last valid row (finite data; those output columns are
// dropped), so no lane reads outside the stage.
//
// Accumulation (both modes): each 128-wide k block is one zero-C chain of 4 mma (two
// segments x two steps) per 16 x 8 tile, added to the fp32 accumulators in registers:
//   scaled mode: acc += chain                                (the epilogue scales)
//   block mode:  acc += chain * (sa[m, kb] * sw[n / 128, kb])  (one FFMA per element)
// so nothing is carried across blocks in the tensor core's reduced-precision accumulator
// (ptx/mma_fp8.cuh, "Accumulator precision").
// int8: every mma accumulates into the int32 accumulators directly (C = acc): exact.
//
// PDL (sm_90, when the host launches with programmatic stream serialization): the weights
// (and block-mode weight scales) of the first STAGES - 1 stages are requested before
// griddepcontrol.wait; activations, activation scales, bias, the workspace and the output
// are touched only after it. Contract: the kernel just before this one on the stream must
// not write the weights (include/lowbit/gemm.hpp).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "cuda/fp8_gemm/sm89_fp8_gemm_epilogue.cuh"
#include "cuda/fp8_gemm/sm89_fp8_gemm_params.hpp"
#include "cuda/heuristics/sm89_fp8_gemm_heuristic.hpp"
#include "cuda/pipeline/sm80_multistage.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/ldmatrix.cuh"
#include "cuda/ptx/mma_fp8.cuh"
#include "cuda/ptx/mma_int8.cuh"

namespace lowbit::cuda {

template <int CFG, bool BLOCK, Sm89Fp8Element ELEM>
struct Sm89Fp8Gemm {
  static constexpr bool INT8 = ELEM == Sm89Fp8Element::kInt8;
  static_assert(!(INT8 && BLOCK), "int8 has the scaled mode only (per-token x per-channel scales)");
  // The mma accumulator: fp32 (e4m3) or int32 (int8, exact).
  using Acc = std::conditional_t<INT8, int32_t, float>;
  static constexpr Sm89Fp8TileConfig kCfg = kSm89Fp8Configs[CFG];
  static constexpr int BLOCK_N = kCfg.block_n;
  static constexpr int BLOCK_M = kCfg.block_m;
  static constexpr int BLOCK_K = kCfg.block_k;
  static constexpr int WARPS_N = kCfg.warps_n;
  static constexpr int WARPS_M = kCfg.warps_m;
  static constexpr int WARPS_K = kCfg.warps_k;
  static constexpr int STAGES = kCfg.stages;
  static constexpr int THREADS = kCfg.threads();
  static constexpr int WARP_N = BLOCK_N / WARPS_N;
  static constexpr int WARP_M = BLOCK_M / WARPS_M;
  static constexpr int WARP_K = BLOCK_K / WARPS_K;
  static constexpr int STRIPS = WARP_N / 16;     // 16-channel strips per warp (mma A tiles)
  static constexpr int MBLK = WARP_M / 8;        // 8-token blocks per warp (mma B tiles)
  static constexpr int BPW = WARP_K / 128;       // 128-wide k blocks per warp per stage
  static constexpr int KBS = BLOCK_K / 128;      // 128-wide k blocks per stage
  static constexpr int UPR = BLOCK_K / 16;       // 16-byte units per operand row of a stage
  // Copy geometry: CW threads per row (consecutive threads, consecutive 16-byte units of one
  // row: 16 x 16 = 256 contiguous bytes per row and warp instruction at least), RPP rows per
  // pass of the CTA (a multiple of 8: the rows of one thread share r & 7), JW units per row
  // and thread, kWH / kXH passes over the weight / activation rows.
  static constexpr int CW = UPR < THREADS / 8 ? UPR : THREADS / 8;
  static constexpr int RPP = THREADS / CW;
  static constexpr int JW = UPR / CW;
  static constexpr int kWH = BLOCK_N / RPP;
  static constexpr int kXH = (BLOCK_M + RPP - 1) / RPP;

  static_assert(BLOCK_N % (16 * WARPS_N) == 0, "a warp owns whole 16-channel strips");
  static_assert(128 % BLOCK_N == 0, "a tile lies inside one 128-row weight-scale block");
  static_assert(BLOCK_M % (8 * WARPS_M) == 0, "a warp owns whole 8-token blocks");
  static_assert(BLOCK_K % (128 * WARPS_K) == 0, "a k-warp owns whole 128-wide k blocks (block-mode scales)");
  static_assert(CW % 8 == 0 && UPR % CW == 0 && RPP % 8 == 0,
                "a thread's units share one swizzle (row & 7 and unit bits 0..2 fixed)");
  static_assert(BLOCK_N % RPP == 0, "weight rows split evenly over the copy passes");

  // ---- shared memory of one stage: W | SA | SW | X (X last: its row count is m-dependent)
  static constexpr int kWBytes = BLOCK_N * BLOCK_K;
  static constexpr int kSaBytes = BLOCK ? KBS * BLOCK_M * 4 : 0;
  static constexpr int kSwUnits = (KBS + 3 + 3) / 4;  // a 16-byte-aligned window of KBS floats
  // 64 bytes, padded so that the activation rows start 128-byte aligned.
  static constexpr int kSwBytes = BLOCK ? (kSaBytes + 64 + 127) / 128 * 128 - kSaBytes : 0;
  static_assert(kSwUnits * 16 <= 64, "the weight-scale window fits its 64 bytes");
  static constexpr int kSaUnits = KBS * BLOCK_M / 4;  // 16-byte units of a stage's SA
  static_assert(kSaUnits <= THREADS, "one activation-scale copy per thread at most");
  static constexpr int kFixedStageBytes = kWBytes + kSaBytes + kSwBytes;
  static_assert(kFixedStageBytes % 128 == 0, "stage regions stay 128-byte aligned");

  using Epilogue = Sm89Fp8Epilogue<BLOCK_M, BLOCK_N, THREADS>;

  // Activation rows held per stage: min(m, BLOCK_M).
  LOWBIT_HD static constexpr int x_rows(int m) { return m < BLOCK_M ? m : BLOCK_M; }
  LOWBIT_HD static constexpr int stage_bytes(int m) { return kFixedStageBytes + x_rows(m) * BLOCK_K; }
  // Dynamic shared memory of a launch for m tokens: the pipeline, or the fp32 epilogue tile
  // of x_rows(m) rows that reuses it, whichever is larger.
  LOWBIT_HD static constexpr int smem_bytes(int m) {
    return STAGES * stage_bytes(m) > Epilogue::Tile::bytes(x_rows(m)) ? STAGES * stage_bytes(m)
                                                                      : Epilogue::Tile::bytes(x_rows(m));
  }
  static constexpr int kMaxSmemBytes = smem_bytes(BLOCK_M);
  // Ada (sm_89) grants a block 99 KB of dynamic shared memory: every row must fit it.
  static_assert(kMaxSmemBytes <= 99 * 1024, "an sm89_fp8_gemm row fits the 99 KB of an sm_89 block");

  // Byte offset of 16-byte unit `unit` of row `row` in a region of BLOCK_K-byte rows.
  LOWBIT_HD static constexpr int swizzled(int row, int unit) { return row * BLOCK_K + ((unit ^ (row & 7)) * 16); }

  LOWBIT_DEVICE static void run(const Sm89Fp8GemmParams& p, unsigned char* smem) {
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wn = warp % WARPS_N;
    const int wm = (warp / WARPS_N) % WARPS_M;
    const int wk = warp / (WARPS_N * WARPS_M);
    const int t = lane % 4;  // mma fragment: thread in group (tokens 2t, 2t + 1 of C)

    // Tile of this CTA. Several token tiles: GROUP_M of them side by side, so that the CTAs
    // running together share weight tiles in L2.
    int m_tile = 0, n_tile = static_cast<int>(blockIdx.x);
    if (p.m_tiles > 1) {
      constexpr int GROUP_M = 8;
      const int per_group = GROUP_M * p.n_tiles;
      const int first_m = static_cast<int>(blockIdx.x) / per_group * GROUP_M;
      const int group_m = min(p.m_tiles - first_m, GROUP_M);
      const int in_group = static_cast<int>(blockIdx.x) % per_group;
      m_tile = first_m + in_group % group_m;
      n_tile = in_group / group_m;
    }
    const int n0 = n_tile * BLOCK_N, m0 = m_tile * BLOCK_M;
    const int xr = x_rows(p.m);              // activation rows held per stage
    const int valid_m = min(xr, p.m - m0);   // token rows of this tile
    const int stage_stride = kFixedStageBytes + xr * BLOCK_K;
    const int k = p.k;

    // k range of this split; the last splits may be short or empty.
    const int iters_total = (k + BLOCK_K - 1) / BLOCK_K;
    const int iters_per_split = (iters_total + static_cast<int>(gridDim.z) - 1) / static_cast<int>(gridDim.z);
    const int k_begin = static_cast<int>(blockIdx.z) * iters_per_split * BLOCK_K;
    const int k_end = min(k, k_begin + iters_per_split * BLOCK_K);
    const int iters = k_begin < k_end ? (k_end - k_begin + BLOCK_K - 1) / BLOCK_K : 0;
    const uint32_t smem_addr = ptx::cvta_shared(smem);

    // ---- loader state. Thread tid copies units c0 + j * CW (j < JW) of rows r0 + h * RPP of
    // a region; rows of one thread share r & 7, so its swizzled offsets are compile-time
    // steps from one base.
    const int c0 = tid % CW, r0 = tid / CW;
    const int ld_off = swizzled(r0, c0);
    // Weights: rows n0 + r0 + h * RPP, h < w_rows (rows past n: not copied; they only make
    // output channels that are never stored).
    const int w_rows = max(0, min(kWH, (p.n - n0 - r0 + RPP - 1) / RPP));
    const uint8_t* w_src = p.w + static_cast<int64_t>(min(n0 + r0, p.n - 1)) * k + c0 * 16;
    // Activations: rows m0 + r0 + h * RPP, h < x_h (rows past the tile: not copied, never read).
    const int x_h = max(0, min(kXH, (valid_m - r0 + RPP - 1) / RPP));
    const uint8_t* x_src = p.a + static_cast<int64_t>(min(m0 + r0, p.m - 1)) * k + c0 * 16;
    const int64_t row_step = static_cast<int64_t>(RPP) * k;  // global bytes between a thread's rows
    // Block mode: the tile's weight-scale row and the activation-scale unit of this thread.
    const int nb = n0 / 128;
    const int64_t sw_row_base = static_cast<int64_t>(nb) * p.k_blocks;  // sw[nb][0]
    const int64_t sw_total = static_cast<int64_t>(p.n_blocks) * p.k_blocks;
    const int sa_kbl = tid / (BLOCK_M / 4), sa_tok = m0 + 4 * (tid % (BLOCK_M / 4));

    // Rows h < rows of a region: dst = the thread's first unit in the stage, src = its first
    // unit in global memory (column 0 of the stage). Columns past k_end (the last stage of a
    // split, k % BLOCK_K != 0) are zero-filled: 0 x (stale bytes, possibly NaN codes) = NaN.
    auto copy_rows = [&](auto h_count, uint32_t dst, const uint8_t* src, int rows, int kst) {
      constexpr int H = decltype(h_count)::value;
      if (kst + BLOCK_K <= k_end) {
#pragma unroll
        for (int h = 0; h < H; ++h) {
          if (h >= rows) break;
          const uint8_t* s_h = src + h * row_step + kst;
#pragma unroll
          for (int j = 0; j < JW; ++j)
            ptx::cp_async_16(dst + static_cast<uint32_t>(h * RPP * BLOCK_K + j * CW * 16), s_h + j * CW * 16);
        }
      } else {
#pragma unroll
        for (int h = 0; h < H; ++h) {
          if (h >= rows) break;
          const uint8_t* s_h = src + h * row_step + kst;
#pragma unroll
          for (int j = 0; j < JW; ++j) {
            const bool ok = kst + (c0 + j * CW) * 16 < k_end;
            ptx::cp_async_16_zfill(dst + static_cast<uint32_t>(h * RPP * BLOCK_K + j * CW * 16),
                                   ok ? s_h + j * CW * 16 : src, ok ? 16u : 0u);
          }
        }
      }
    };

    // Weights (and weight scales) of the stage starting at column kst into `slot`.
    auto load_w = [&](int slot, int kst) {
      const uint32_t st = smem_addr + static_cast<uint32_t>(slot * stage_stride);
      copy_rows(std::integral_constant<int, kWH>{}, st + static_cast<uint32_t>(ld_off), w_src, w_rows, kst);
      if constexpr (BLOCK) {
        if (tid < 4 * kSwUnits) {
          // Window of 4 kSwUnits floats from the 16-byte-aligned element at or before
          // sw[nb][kst / 128], one float per thread (4-byte copies: the grid can be shorter
          // than 16 bytes); elements past the array are zero-filled.
          const int64_t first = (sw_row_base + kst / 128) & ~int64_t{3};
          const int64_t elem = first + tid;
          const bool in = elem < sw_total;
          ptx::cp_async_4_zfill(st + kWBytes + kSaBytes + 4 * tid, in ? p.sw + elem : p.sw, in ? 4u : 0u);
        }
      }
    };
    // Activations (and activation scales) of the stage starting at column kst into `slot`.
    auto load_x = [&](int slot, int kst) {
      const uint32_t st = smem_addr + static_cast<uint32_t>(slot * stage_stride);
      copy_rows(std::integral_constant<int, kXH>{}, st + static_cast<uint32_t>(kFixedStageBytes + ld_off), x_src, x_h,
                kst);
      if constexpr (BLOCK) {
        if (tid < kSaUnits) {
          // sa[kb][tok .. tok + 3] (K-block-major, rows padded to m4): units past the padded
          // row or past the last k block are zero-filled.
          const int kb = kst / 128 + sa_kbl;
          const bool ok = kb < p.k_blocks && sa_tok < p.m4;
          const float* src_sa = ok ? p.sa + static_cast<int64_t>(kb) * p.m4 + sa_tok : p.sa;
          ptx::cp_async_16_zfill(st + kWBytes + (sa_kbl * BLOCK_M + 4 * (tid % (BLOCK_M / 4))) * 4, src_sa,
                                 ok ? 16u : 0u);
        }
      }
    };

    // The pipeline's loads, each stage's weights (load_const) and activations (load_act) in
    // order: with PDL the first stages' weights are requested before griddepcontrol.wait, the
    // activations after it (multistage_mainloop_pdl).
    int w_next = 0, x_next = 0;  // the next stage of each
    auto load_const = [&](int slot) { load_w(slot, k_begin + w_next++ * BLOCK_K); };
    auto load_act = [&](int slot) { load_x(slot, k_begin + x_next++ * BLOCK_K); };

    // ---- compute state
    Acc acc[STRIPS][MBLK][4];
#pragma unroll
    for (int i = 0; i < STRIPS; ++i)
#pragma unroll
      for (int j = 0; j < MBLK; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = Acc(0);
    const int strip0 = wn * STRIPS;  // first strip of the warp in the CTA tile
    const int mblk0 = wm * MBLK;     // first 8-token block of the warp
    // ldmatrix: lane l supplies the address of row (l & 7) of matrix (l >> 3).
    const int lr = lane & 7, lq = lane >> 3;
    // A (16 x 32 per k32 step q of a 128-block): matrix lq = rows 8 (lq & 1) .., unit 2q + (lq >> 1).
    const int a_row = strip0 * 16 + lr + 8 * (lq & 1);
    int a_off[4];  // swizzled offset of the lane's row and unit, k32 step q of a 128-block
#pragma unroll
    for (int q = 0; q < 4; ++q) a_off[q] = swizzled(a_row, 2 * q + (lq >> 1));
    int k_comp = k_begin;  // first column of the stage being computed

    // One 128-wide k block at stage column kl: A fragments of every strip, then per token
    // block a zero-C chain of 4 mma per strip, added to acc (block mode: times its scale).
    auto compute_block = [&](uint32_t st_addr, const unsigned char* st, int kl, float swv) {
      if (mblk0 * 8 >= valid_m) return;  // no token of this warp in the tile (small m, big tile)
      uint32_t a[STRIPS][4][4];  // [strip][k32 step][mma A register]
#pragma unroll
      for (int i = 0; i < STRIPS; ++i)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          ptx::ldmatrix_x4(a[i][q], st_addr + static_cast<uint32_t>(i * 16 * BLOCK_K + kl + a_off[q]));
#pragma unroll
      for (int j = 0; j < MBLK; ++j) {
        if ((mblk0 + j) * 8 >= valid_m) break;  // token blocks past the tile (warp-uniform)
        // B: matrix lq = k unit lq (segment 0) / 4 + lq (segment 1) of token row tok (clamped
        // to the last valid row: no read past the copied rows).
        const int tok = min((mblk0 + j) * 8 + lr, valid_m - 1);
        uint32_t b[2][4];  // [segment][b0, b1 of step 0, b0, b1 of step 1]
        const uint32_t b_row = st_addr + static_cast<uint32_t>(kFixedStageBytes + kl);
        ptx::ldmatrix_x4(b[0], b_row + static_cast<uint32_t>(swizzled(tok, lq)));
        ptx::ldmatrix_x4(b[1], b_row + static_cast<uint32_t>(swizzled(tok, 4 + lq)));
        float s0 = 1.f, s1 = 1.f;
        if constexpr (BLOCK) {
          // Activation scales of tokens 2t, 2t + 1 of the block (sa[kb][tok], 8-byte aligned).
          const float2 sa2 =
              *reinterpret_cast<const float2*>(st + kWBytes + ((kl / 128) * BLOCK_M + (mblk0 + j) * 8 + 2 * t) * 4);
          s0 = sa2.x * swv;
          s1 = sa2.y * swv;
        }
#pragma unroll
        for (int i = 0; i < STRIPS; ++i) {
          if constexpr (INT8) {
            // int8: the 4 k32 steps straight into the int32 accumulators (exact, no chain).
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const uint32_t bf[2] = {b[q / 2][2 * (q % 2)], b[q / 2][2 * (q % 2) + 1]};
              ptx::mma_m16n8k32_s8s8(acc[i][j], a[i][q], bf);
            }
          } else {
            float c[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const uint32_t bf[2] = {b[q / 2][2 * (q % 2)], b[q / 2][2 * (q % 2) + 1]};
              if (q == 0)
                ptx::mma_m16n8k32_e4m3_zero_c(c, a[i][q], bf);
              else
                ptx::mma_m16n8k32_e4m3(c, a[i][q], bf);
            }
            if constexpr (BLOCK) {
              // c[0], c[2]: token 2t (channels g, g + 8); c[1], c[3]: token 2t + 1.
              acc[i][j][0] = fmaf(c[0], s0, acc[i][j][0]);
              acc[i][j][1] = fmaf(c[1], s1, acc[i][j][1]);
              acc[i][j][2] = fmaf(c[2], s0, acc[i][j][2]);
              acc[i][j][3] = fmaf(c[3], s1, acc[i][j][3]);
            } else {
#pragma unroll
              for (int e = 0; e < 4; ++e) acc[i][j][e] += c[e];
            }
          }
        }
      }
    };

    auto compute_stage = [&](int slot) {
      const unsigned char* st = smem + slot * stage_stride;
      const uint32_t st_addr = smem_addr + static_cast<uint32_t>(slot * stage_stride);
      // Block mode: sw[nb][kb] of the stage's blocks sit at float (first & 3) + kbl of the
      // window load_w() copied.
      const int sw_off = static_cast<int>((sw_row_base + k_comp / 128) & 3);
      const float* sw_st = reinterpret_cast<const float*>(st + kWBytes + kSaBytes) + sw_off;
      const bool full = k_comp + BLOCK_K <= k_end;
#pragma unroll
      for (int bl = 0; bl < BPW; ++bl) {
        const int kl = wk * WARP_K + bl * 128;  // column of the block inside the stage
        if (!full && k_comp + kl >= k_end) break;  // the same for the whole warp
        const float swv = BLOCK ? sw_st[kl / 128] : 1.f;
        compute_block(st_addr, st, kl, swv);
      }
      k_comp += BLOCK_K;
    };

    multistage_mainloop_pdl<STAGES>(iters, load_const, load_act, compute_stage);

    // ---- epilogue: the k-warps' accumulators into the fp32 tile (fixed order), then out.
    // int8: an int32 tile (exact sums of the k-warps), converted in place to this split's
    // scaled fp32 partial (the zero-point term in split 0 only), then the fp32 paths below
    // with nothing left to scale.
    float* red = reinterpret_cast<float*>(smem);
    if constexpr (INT8) {
      // The k-warps' exact int32 sums (the fp32 tile's words), then converted in place.
      Epilogue::Tile::template accumulate<STRIPS, MBLK, WARPS_K>(reinterpret_cast<int32_t*>(red), acc, strip0, mblk0,
                                                                 wk, xr);
      Epilogue::int8_scale_tile(red, m0, n0, valid_m, p, blockIdx.z == 0);
    } else {
      Epilogue::Tile::template accumulate<STRIPS, MBLK, WARPS_K>(red, acc, strip0, mblk0, wk, xr);
    }
    constexpr bool kScaleInStore = !BLOCK && !INT8;  // fp8 scaled mode: (acc * sa) * sw at the store
    const auto mode = static_cast<Sm89Fp8SplitMode>(p.split_mode);
    if (mode == Sm89Fp8SplitMode::kCluster) {
      Epilogue::store_cluster(red, m0, n0, valid_m, p, kScaleInStore);
    } else if (mode == Sm89Fp8SplitMode::kWorkspace) {
      Epilogue::Tile::store_partial(red, p.partials + static_cast<int64_t>(blockIdx.z) * p.m * p.n, m0, n0,
                                    valid_m, p.n);
    } else {
      Epilogue::store(red, m0, n0, valid_m, p, kScaleInStore);
    }
  }
};

// Kernel entry: the only architecture guard of the family (CONVENTIONS.md). mma.sync with
// e4m3 operands exists from sm_89 on; the sm_80 image of an e4m3 kernel only traps (the host
// never launches it there: sm89_fp8_gemm_runs_on()). mma.sync s8.s8, cp.async and ldmatrix
// exist from sm_80 on: the int8 kernels (sm80_int8_gemm) have real code in every image.
template <int CFG, bool BLOCK, Sm89Fp8Element ELEM>
__global__ void __launch_bounds__(kSm89Fp8Configs[CFG].threads(), kSm89Fp8Configs[CFG].min_ctas)
    sm89_fp8_gemm_kernel(const Sm89Fp8GemmParams p) {
#if LOWBIT_HAS_SM80
  if constexpr (ELEM == Sm89Fp8Element::kInt8 || LOWBIT_ARCH >= 890) {
    extern __shared__ __align__(128) unsigned char smem[];
    Sm89Fp8Gemm<CFG, BLOCK, ELEM>::run(p, smem);
  } else {
    LOWBIT_DEVICE_TRAP("sm89_fp8_gemm needs sm_89 or newer");
  }
#else
  LOWBIT_DEVICE_TRAP(ELEM == Sm89Fp8Element::kInt8 ? "sm80_int8_gemm needs sm_80 or newer"
                                                   : "sm89_fp8_gemm needs sm_89 or newer");
#endif
}

}  // namespace lowbit::cuda
