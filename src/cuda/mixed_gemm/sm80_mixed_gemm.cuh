// The sm80 mixed GEMM kernel: out(m, n) = A(m, k) * dequant(W)(n, k)^T (+ bias), A and out
// f16 or bf16, W 4- or 8-bit in the tiled layout (smxx_tiled_layout.hpp), fp32 accumulation
// with mma.sync.m16n8k16. Runs on sm_80, sm_89 and sm_90 (plain mma.sync; on sm_90 the
// split-K reduction uses thread-block clusters). Design and measurements:
// docs/kernels/mixed_gemm.md.
//
// One CTA computes a BLOCK_N (channels) x BLOCK_M (tokens) tile over the k range of its
// split (blockIdx.z). Per stage of BLOCK_K columns it copies, with cp.async:
//   W  BLOCK_N/16 strips x BLOCK_K/chunk_k chunks of 512 bytes, as laid out in memory;
//   A  BLOCK_M rows x BLOCK_K values, 16-byte units swizzled (x_tile_offset);
//   S  the scale rows (and u8 zero rows) of the groups the stage touches (slot = group).
// Warps split the tile along n (WARPS_N), m (WARPS_M) and the stage's chunks along k
// (WARPS_K). A warp reads its lane's 16 bytes of a chunk per strip (one LDS.128), decodes
// them into A fragments (dequant/sm80_tiled_decode.cuh), gets B fragments of the tokens by
// ldmatrix and issues STRIPS x MBLK mma per k16 step.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "cuda/dequant/sm80_tiled_decode.cuh"
#include "cuda/epilogue/sm80_tile_epilogue.cuh"
#include "cuda/heuristics/sm80_mixed_gemm_heuristic.hpp"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"
#include "cuda/mma/sm80_weight_a_warp_tile.cuh"
#include "cuda/pipeline/sm80_multistage.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/cvta.cuh"

namespace lowbit::cuda {

namespace mixed_gemm_detail {
template <int N, class F, int I = 0>
LOWBIT_DEVICE void static_for(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    static_for<N, F, I + 1>(static_cast<F&&>(f));
  }
}
}  // namespace mixed_gemm_detail

// Dynamic shared memory a block of every sm_80+ GPU may use: 99 KB on sm_86 / sm_89 (Ampere
// and Ada consumer and workstation parts: RTX 30 / 40, A10, A40, L4, L40S), 163 KB on sm_80,
// 227 KB on sm_90. Most table rows need more at their table stage count (t16n128 4-bit: 4 x
// 27 KB), so each has a SMALL variant with the stages that fit this (fewer cp.async stages,
// same code), which the family launches where the GPU's opt-in limit is below the table
// variant's need. Not measured on such a GPU (none in reach); tested on sm_90.
inline constexpr int kMixedGemmSmallSmemBytes = 99 * 1024;

template <typename T, int BITS, int CFG, bool SMALL = false>
struct Sm80MixedGemm {
  static constexpr MixedGemmTileConfig kCfg = kMixedGemmConfigs[CFG];
  static constexpr int BLOCK_N = kCfg.block_n;
  static constexpr int BLOCK_M = kCfg.block_m;
  static constexpr int BLOCK_K = kCfg.block_k;
  static constexpr int WARPS_N = kCfg.warps_n;
  static constexpr int WARPS_M = kCfg.warps_m;
  static constexpr int WARPS_K = kCfg.warps_k;
  static constexpr int THREADS = kCfg.threads();
  static constexpr int WARP_N = BLOCK_N / WARPS_N;
  static constexpr int WARP_M = BLOCK_M / WARPS_M;
  static constexpr int WARP_K = BLOCK_K / WARPS_K;
  static constexpr int STRIPS = WARP_N / 16;            // weight strips per warp
  static constexpr int MBLK = WARP_M / 8;               // 8-token blocks per warp
  static constexpr int CHUNK_K = tiled::chunk_k(BITS);  // k per 512-byte chunk
  static constexpr int CPS = BLOCK_K / CHUNK_K;         // chunks per strip per stage
  static constexpr int CPW = WARP_K / CHUNK_K;          // chunks per warp per stage
  static constexpr int STEPS = CHUNK_K / 16;            // k16 steps per chunk
  static constexpr int SLOTS = BLOCK_K / 32;            // scale rows per stage (groups >= 32)
  // Token tiles of up to 32 per warp apply group scales to the fp32 mma results (see the
  // warp tile); t64 / t128 scale the weights before the mma (the decode feeds 8-16 mma).
  static constexpr bool kScaleAfter = MBLK <= 4;
  static constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  static constexpr bool kSymDecode = kBf16 && BITS == 8;

  static_assert(BITS == 4 || BITS == 8, "4- and 8-bit weights");
  static_assert(BLOCK_N % (16 * WARPS_N) == 0, "a warp owns whole 16-channel strips");
  static_assert(BLOCK_M % (8 * WARPS_M) == 0, "a warp owns whole 8-token blocks");
  static_assert(BLOCK_K % (CHUNK_K * WARPS_K) == 0, "a k-warp owns whole chunks");
  static_assert(BLOCK_K % 64 == 0, "stages are whole 64-column blocks (k is a multiple of 64)");

  // Shared memory of one stage: W | scales | zeros | A. With one token block per warp the
  // activation region holds only xr = min(BLOCK_M, m) rows (decode: 1 row, not 8), so its
  // size is a launch parameter; larger tiles keep BLOCK_M rows (see the warp tile).
  static constexpr int kWBytes = BLOCK_N / 16 * CPS * tiled::kChunkBytes;
  static constexpr int kSBytes = SLOTS * BLOCK_N * 2;
  static constexpr int kZBytes = SLOTS * BLOCK_N;
  static constexpr int kFixedStageBytes = kWBytes + kSBytes + kZBytes;
  static_assert(kFixedStageBytes % 16 == 0, "stage regions stay 16-byte aligned");
  // Stages: the table's, or (SMALL) as many stages of BLOCK_M activation rows as fit
  // kMixedGemmSmallSmemBytes.
  static constexpr int kFullStageBytes = kFixedStageBytes + BLOCK_M * BLOCK_K * 2;
  static constexpr int kSmallStages = kMixedGemmSmallSmemBytes / kFullStageBytes < kCfg.stages
                                          ? kMixedGemmSmallSmemBytes / kFullStageBytes
                                          : kCfg.stages;
  static constexpr int STAGES = SMALL ? kSmallStages : kCfg.stages;
  static_assert(STAGES >= 2, "a pipeline of at least two stages fits the small shared-memory budget");
  using Epilogue = TileEpilogue<T, BLOCK_M, BLOCK_N, THREADS>;

  LOWBIT_HD static constexpr int x_rows(int m) { return MBLK == 1 && m < BLOCK_M ? m : BLOCK_M; }
  LOWBIT_HD static constexpr int stage_bytes(int m) { return kFixedStageBytes + x_rows(m) * BLOCK_K * 2; }
  // Dynamic shared memory of a launch for m tokens: the pipeline, or the fp32 epilogue tile
  // of x_rows(m) rows that reuses it, whichever is larger.
  LOWBIT_HD static constexpr int smem_bytes(int m) {
    return STAGES * stage_bytes(m) > Epilogue::bytes(x_rows(m)) ? STAGES * stage_bytes(m)
                                                                : Epilogue::bytes(x_rows(m));
  }
  static constexpr int kMaxSmemBytes = smem_bytes(BLOCK_M);
  static_assert(!SMALL || kMaxSmemBytes <= kMixedGemmSmallSmemBytes, "the small variant fits 99 KB");

  using WarpTile = WeightAWarpTile<T, BITS, STRIPS, MBLK, kScaleAfter>;
  using Decoder = typename WarpTile::Decoder;
  using Consts = typename WarpTile::Consts;

  // Copy assignments are fixed for the kernel. Weights: each copy instruction of a warp moves
  // one whole 512-byte chunk (one 16-byte unit per lane: coalesced) to the place it has when
  // unit tid + i THREADS is copied (shared unit order = strip x CPS + chunk). Which chunks warp
  // w copies, as copy i = strip w_strip0 + copy_strip(i), chunk w_chunk + copy_chunk(i), both
  // offsets compile-time:
  //   interleaved (every row but one): chunks j = w + i kWarps (strip j / CPS, chunk j % CPS).
  //     With kWarps a multiple of CPS, chunk w % CPS of every (kWarps / CPS)-th strip; with CPS
  //     a multiple of kWarps and one strip per stage, CPS / kWarps copies kWarps chunks apart.
  //   consecutive (kWConsecutive: the rows of up to 32 tokens whose stage has several strips,
  //     t16 / t16n128 / t16n256 / t32 at both widths, except f16 4-bit t32 and bf16 8-bit
  //     t16n256): chunks j = w kWChunks + i, i.e. whole strips (w kWChunks / CPS + i / CPS,
  //     chunk i % CPS). There the interleaved form made each warp touch every strip.
  // One source pointer plus a strip step; only the strip (against n) and, in a split's last
  // stage, the column are tested. (The first form kept a 64-bit pointer and a column per unit
  // and tested both on every copy; under the 128-register cap ptxas rematerialized the
  // thread's copy offsets from SR_TID.X in the mainloop. Consecutive copies for every row ran
  // W4 at m = 24 / 32 0.3-1.1 us slower than interleaved on an H100 (sm80 notes v12); on the
  // 8-bit t16 rows they gain, W8 per-channel down at m = 16 24.45 -> 21.60 us on an H200 (v13);
  // on every such row, together with the one-block loader and the symmetric wide loop, W4 g128
  // f16 at m = 16 56.4 -> 55.0 on an H200 (v14). Per kernel they split by activation type:
  // interleaved is faster on f16 4-bit t32 (W4 g128 f16 gate_up at m = 24 38.06 -> 35.91 us)
  // and on bf16 8-bit t16n256 (W8 bf16 gate_up at m = 16 34.65 -> 33.88 us), consecutive on
  // bf16 4-bit t32 (by 0.5 us) and f16 8-bit t16n256 (by 0.2-0.3 us), H200, v15.)
  static constexpr int kWarps = THREADS / 32;
  static constexpr int kStageChunks = BLOCK_N / 16 * CPS;  // 512-byte chunks of a stage's weights
  static_assert(kStageChunks % kWarps == 0, "every warp copies the same number of weight chunks");
  static constexpr int kWChunks = kStageChunks / kWarps;
  static_assert(kWarps % CPS == 0 || CPS % kWarps == 0, "a warp's copies are whole strips apart or in one strip");
  static constexpr int kWPerStrip = kWarps >= CPS ? 1 : CPS / kWarps;  // a warp's copies per strip (interleaved)
  static constexpr bool kWConsecutive = kScaleAfter && kStageChunks > CPS && kWChunks % CPS == 0 &&
                                        !(BITS == 4 && BLOCK_M == 32 && !kBf16) &&
                                        !(BITS == 8 && BLOCK_N == 256 && kBf16);
  LOWBIT_HD static constexpr int copy_strip(int i) {
    return kWConsecutive ? i / CPS : kWarps >= CPS ? i * (kWarps / CPS) : i / kWPerStrip;
  }
  LOWBIT_HD static constexpr int copy_chunk(int i) {
    return kWConsecutive ? i % CPS : kWarps >= CPS ? 0 : (i % kWPerStrip) * kWarps;
  }
  static constexpr int kWDstStep = kWConsecutive ? 512 : kWarps * 512;  // shared bytes between a warp's copies
  static constexpr int kXUnits = BLOCK_K / 8;              // 16-byte units of an activation row
  static_assert(THREADS % kXUnits == 0, "activation rows split evenly over the threads");
  static constexpr int kXRowStep = THREADS / kXUnits;      // rows between a thread's copies
  static constexpr int kXIters = (BLOCK_M + kXRowStep - 1) / kXRowStep;
  static constexpr int kSUnits = BLOCK_N / 8;              // 16-byte units of a slot's scales
  static constexpr int kZUnits = BLOCK_N / 16;             // 16-byte units of a slot's zeros
  static constexpr int kSThreads = SLOTS * kSUnits;  // threads copying scales (and zeros)
  static_assert(kSThreads <= THREADS && SLOTS * kZUnits <= kSThreads, "one scale copy per thread at most");
  // The swizzle of a chunk's columns is known at compile time for every chunk of a warp
  // (WarpTile::x_at): the warp's first column (wk WARP_K) and every stage region are 128-byte
  // aligned.
  static_assert(WARP_K % 64 == 0, "a k-warp's first column is 128-byte aligned in the activation tile");
  static_assert(kFixedStageBytes % 128 == 0, "activation tiles stay 128-byte aligned");

  LOWBIT_DEVICE static void run(MixedGemmParams p, unsigned char* smem) {
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wn = warp % WARPS_N;
    const int wm = (warp / WARPS_N) % WARPS_M;
    const int wk = warp / (WARPS_N * WARPS_M);

    // Act-order: the packed k, the activation copy's stride and the group count come from
    // the index buffer (they depend on g_idx, which only the packer saw).
    int k = p.k, lda = p.lda, groups = p.groups;
    if (p.act_index != nullptr) {
      k = p.act_index[0];
      groups = p.act_index[1];
      lda = k;
    }

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
    const int xr = x_rows(p.m);                 // activation rows held per stage
    const int valid_m = min(xr, p.m - m0);      // rows of this tile
    const int stage_stride = kFixedStageBytes + xr * BLOCK_K * 2;

    // k range of this split; the last splits may be short or empty.
    const int iters_total = (k + BLOCK_K - 1) / BLOCK_K;
    const int splits = static_cast<int>(gridDim.z);
    const int iters_per_split = (iters_total + splits - 1) / splits;
    const int k_begin = static_cast<int>(blockIdx.z) * iters_per_split * BLOCK_K;
    const int k_end = min(k, k_begin + iters_per_split * BLOCK_K);
    const int iters = k_begin < k_end ? (k_end - k_begin + BLOCK_K - 1) / BLOCK_K : 0;

    const int gs = p.group_size;
    // Groups are powers of two: slot / group arithmetic by shifts. A group spanning the
    // stage (or per-channel) uses slot 0 (shift 30 maps every stage column to 0).
    const int gs_shift = gs == 32 ? 5 : gs == 64 ? 6 : 7;
    const int slot_shift = (gs == 0 || gs >= BLOCK_K) ? 30 : gs_shift;
    const int slots = (gs == 0 || gs >= BLOCK_K) ? 1 : BLOCK_K >> gs_shift;
    const uint32_t smem_addr = ptx::cvta_shared(smem);

    // ---- loader state, advanced by one stage per load_stage() call (calls come in order)
    // Weights: copy i of the warp is strip w_strip0 + copy_strip(i), chunk w_chunk +
    // copy_chunk(i); w_left: strips of the tile from w_strip0 inside n.
    const int w_strip0 = n0 / 16 + (kWConsecutive ? warp * kWChunks / CPS : kWarps >= CPS ? warp / CPS : 0);
    const int w_chunk = kWConsecutive ? 0 : kWarps >= CPS ? warp % CPS : warp;
    const int w_left = p.n / 16 - w_strip0;
    const uint4* w_src = static_cast<const uint4*>(p.w) +
                         (static_cast<int64_t>(w_left > 0 ? w_strip0 : 0) * (k / CHUNK_K) + k_begin / CHUNK_K + w_chunk) * 32 + lane;
    const uint32_t w_strip_units = static_cast<uint32_t>((k / CHUNK_K) * 32);  // one strip, uint4 units
    const uint32_t w_dst = static_cast<uint32_t>((kWConsecutive ? warp * kWChunks : warp) * 32 + lane) * 16;
    // Activations: thread copies unit x_unit of rows x_row0 + i * kXRowStep (i < x_iters).
    const int x_row0 = tid / kXUnits, x_unit = tid % kXUnits;
    const int x_iters = x_row0 < valid_m ? (valid_m - x_row0 + kXRowStep - 1) / kXRowStep : 0;
    const T* x_src = static_cast<const T*>(p.a) + static_cast<int64_t>(m0 + x_row0) * lda + k_begin + x_unit * 8;
    const int64_t x_row_step = static_cast<int64_t>(kXRowStep) * lda;
    const int x_smem0 = x_tile_offset<BLOCK_K>(x_row0, x_unit);
    // Scales / zero points: thread t < kSThreads copies unit t % units of slot t / units.
    const bool s_copy = gs != 0 && tid / kSUnits < slots && n0 + (tid % kSUnits) * 8 < p.n;
    const bool z_copy = p.zeros != nullptr && tid / kZUnits < slots && n0 + (tid % kZUnits) * 16 < p.n;
    const int s_group0 = tid / kSUnits, z_group0 = tid / kZUnits;  // group offset in the stage
    const T* s_src = static_cast<const T*>(p.scales) + static_cast<int64_t>(s_group0) * p.n + n0 + (tid % kSUnits) * 8;
    const uint8_t* z_src = p.zeros + static_cast<int64_t>(z_group0) * p.n + n0 + (tid % kZUnits) * 16;
    const uint32_t s_dst = kWBytes + s_group0 * BLOCK_N * 2 + (tid % kSUnits) * 16;
    const uint32_t z_dst = kWBytes + kSBytes + z_group0 * BLOCK_N + (tid % kZUnits) * 16;
    // Only the warps holding a copying thread enter the scale / zero-point code (uniform):
    // the stage's `slots` rows need slots x kSUnits threads (g128 at BLOCK_K = 256: one warp),
    // not kSThreads (SLOTS rows, groups of 32); the others skipped it only after ~40
    // instructions of predicates per stage (sm80 notes v12).
    const int sz_threads = slots * (gs != 0 ? kSUnits : p.zeros != nullptr ? kZUnits : 0);
    const bool sz_warp = warp * 32 < sz_threads;
    // The next stage to load: its first column, for the model's constants (weights, scales,
    // zero points: load_const) and for the activations (load_act) apart, because with PDL the
    // first stages' constants are requested before griddepcontrol.wait and their activations
    // after it (multistage_mainloop_pdl).
    int k_load = k_begin, k_load_x = k_begin;
    // Both loaders keep a stage's cp.async in one basic block: the activation copies are
    // predicated (no `break` out of their loop) and the scale / zero-point copies, behind a
    // warp-uniform branch, come before the weight copies. ptxas puts three never-executed but
    // issued `@!PT LDS RZ, [RZ]` at the head of every basic block of LDGSTS, and each branch
    // costs BSSY / BSYNC / BRA (t16n128 W4 f16, full stage: 348 -> 339 instructions per
    // warp-stage, SASS; sm80 notes v14).

    auto load_act = [&](int slot) {
      const uint32_t x_st = smem_addr + slot * stage_stride + kFixedStageBytes;
      const bool in_k = k_load_x + x_unit * 8 < k_end;
      const T* src = x_src;
#pragma unroll
      for (int i = 0; i < kXIters; ++i) {
        uint32_t off;
        if constexpr (MBLK == 1) off = (tid + i * THREADS) * 16;  // unswizzled rows: linear
        else if constexpr (kXRowStep % 8 == 0) off = x_smem0 + i * kXRowStep * BLOCK_K * 2;
        else off = x_tile_offset<BLOCK_K>(x_row0 + i * kXRowStep, x_unit);
        if (in_k && i < x_iters) ptx::cp_async_16(x_st + off, src);
        src += x_row_step;
      }
      x_src += BLOCK_K;
      k_load_x += BLOCK_K;
    };
    auto load_const = [&](int slot) {
      const uint32_t st = smem_addr + slot * stage_stride;
      if (sz_warp) {  // whole warps skip this
        const uint32_t first_group = gs == 0 ? 0u : static_cast<uint32_t>(k_load) >> gs_shift;
        const uint64_t goff = static_cast<uint64_t>(first_group) * static_cast<uint32_t>(p.n);
        if (s_copy && static_cast<int>(first_group) + s_group0 < groups) ptx::cp_async_16(st + s_dst, s_src + goff);
        if (z_copy && static_cast<int>(first_group) + z_group0 < groups) ptx::cp_async_16(st + z_dst, z_src + goff);
      }
      // Only a split's last stage can end inside a chunk: the columns left in the split, once
      // per stage, against each copy's column (a compile-time constant but for w_chunk).
      const int k_rem = k_end - k_load;
#pragma unroll
      for (int i = 0; i < kWChunks; ++i) {
        const int col = (w_chunk + copy_chunk(i)) * CHUNK_K;  // in the stage
        if (copy_strip(i) < w_left && col < k_rem)
          ptx::cp_async_16(st + w_dst + i * kWDstStep,
                           w_src + static_cast<uint64_t>(copy_strip(i)) * w_strip_units + copy_chunk(i) * 32);
      }
      w_src += CPS * 32;
      k_load += BLOCK_K;
    };

    // ---- compute state
    WarpTile tile;
    const int strip0 = wn * STRIPS;  // first strip of the warp in the CTA tile
    const int mblk0 = wm * MBLK;     // first 8-token block of the warp
    tile.template init<BLOCK_K>(mblk0 * 8, valid_m);
    const int pair_off = strip0 * 16 + 2 * (lane / 4);  // channels g, g + 8 of strip 0
    constexpr uint32_t kSymZero = (1u << (BITS - 1)) * 0x0101u;  // z(g), z(g+8) bytes
    const Consts sym_consts = Decoder::make_consts(kSymZero, 0u, false);
    int k_comp = k_begin;  // first column of the stage being computed

    auto compute_stage = [&](int slot) {
      const unsigned char* st = smem + slot * stage_stride;
      const unsigned char* s_st = st + kWBytes;
      const unsigned char* z_st = s_st + kSBytes;
      // The lane's ldmatrix base at the warp's first column (WarpTile::x_base).
      const uint32_t xb = tile.x_base(smem_addr + slot * stage_stride + kFixedStageBytes, wk * WARP_K);

      // Zero points (and, scaling before the mma, scales) of the group holding stage
      // column kl, for every strip of the warp; sf: the scales as fp32 (scaling after).
      // sym_c: symmetric weights known at compile time (a loop copy of its own).
      auto load_consts = [&](Consts (&c)[STRIPS], float (&sf)[STRIPS][2], int kl, auto sym_c) {
        const int s = kl >> slot_shift;
#pragma unroll
        for (int i = 0; i < STRIPS; ++i) {
          const int pos = pair_off + i * 16;
          uint32_t sp = 0;
          if (gs != 0) sp = *reinterpret_cast<const uint32_t*>(s_st + (s * BLOCK_N + pos) * 2);
          if (!decltype(sym_c)::value && p.zeros != nullptr) {
            c[i] = Decoder::make_consts(*reinterpret_cast<const uint16_t*>(z_st + s * BLOCK_N + pos), sp, gs != 0);
          } else {  // symmetric: the zero part is loop-invariant (sym_consts), only scales move
            c[i] = sym_consts;
            Decoder::set_scales(c[i], sp, gs != 0);
          }
          if constexpr (kScaleAfter) {
            if (gs != 0) {
              tiled::scale_pair_to_f32<T>(sp, sf[i][0], sf[i][1]);
            } else {  // per-channel: the epilogue scales
              sf[i][0] = 1.f;
              sf[i][1] = 1.f;
            }
          }
        }
      };
      // A 4-bit chunk spans 64 columns, two halves of 32: consts are loaded for both (the
      // same group unless groups are 32 wide), so no branch splits the chunk and the two
      // halves are independent mma chains.
      constexpr int kHalves = STEPS == 4 ? 2 : 1;

      // The lane's 16 bytes of chunk `chunk` of every strip of the warp.
      auto load_wq = [&](uint4 (&wq)[STRIPS], int chunk) {
#pragma unroll
        for (int i = 0; i < STRIPS; ++i)
          wq[i] = *reinterpret_cast<const uint4*>(st + (((strip0 + i) * CPS + chunk) * 32 + lane) * 16);
      };
      // B fragments of k16 step kStep of the warp's chunk c (one token block: two steps per
      // ldmatrix, at the even step). c and kStep are unrolled constants, so the column
      // folds into the ldmatrix address (WarpTile::x_at).
      auto load_b_step = [&](auto step_c, uint32_t (&b)[STEPS][MBLK][2], int c) {
        constexpr int kStep = decltype(step_c)::value;
        if constexpr (MBLK == 1) {
          if constexpr (kStep % 2 == 0) tile.load_b2(b[kStep], b[kStep + 1], xb, c * CHUNK_K + kStep * 16);
        } else {
          tile.template load_b<BLOCK_K>(b[kStep], xb, c * CHUNK_K + kStep * 16);
        }
      };
      // A full stage runs without bounds checks, so the compiler can interleave the
      // warp's chunks (independent mma chains); only the last stage of a split checks.
      auto chunks = [&](auto check_c, auto sym_c) {
#pragma unroll
        for (int c = 0; c < CPW; ++c) {
          const int chunk = wk * CPW + c;
          const int kl = chunk * CHUNK_K;  // column of the chunk inside the stage
          if constexpr (decltype(check_c)::value) {
            if (k_comp + kl >= k_end) break;  // same for the whole warp
          }
          uint4 wq[STRIPS];
          load_wq(wq, chunk);
          Consts cst[kHalves][STRIPS];
          float sf[2][STRIPS][2];
#pragma unroll
          for (int h = 0; h < kHalves; ++h) load_consts(cst[h], sf[h], kl + 32 * h, sym_c);
          uint32_t b[STEPS][MBLK][2];
          mixed_gemm_detail::static_for<STEPS>([&](auto step_c) {
            constexpr int kStep = decltype(step_c)::value;
            constexpr int kHalf = kHalves == 2 ? kStep / 2 : 0;
            load_b_step(step_c, b, c);
            tile.template step<kStep, kHalf, kStep == 2 * kHalf, decltype(sym_c)::value>(wq, cst[kHalf], b[kStep]);
          });
          if constexpr (kScaleAfter) tile.template flush<kHalves>(sf);
        }
      };
      // Groups of 128 columns or per-channel scales (kScaleAfter tiles): a warp's stage
      // columns are whole 128-column blocks (WARP_K is 128 or 256, its chunks contiguous and
      // 128-aligned), each inside one group. So the block's zero points and scales are read
      // once, its k16 steps accumulate into one mma chain per (strip, token block) that
      // starts from a zero C, and one flush per block adds it to acc (per-channel: times 1,
      // the epilogue scales). The narrow loop above reads them per 32-column half and
      // flushes per half, as groups of 32 need: for group 128 that is 4x the flush FFMAs (32
      // -> 8 per strip and token block per 128 columns) and the scale / zero-point reads and
      // conversions. SASS (t16, W4 g128 f16, full stage): ~556 -> ~432 instructions per warp.
      // Session 33 (docs/kernels/mixed_gemm.md v8), H200, same run, Suite-1 sums at m = 16,
      // us: W4 g128 f16 68.9 -> 61.7, asym f16 75.7 -> 62.1, W8 per-channel f16 90.1 -> 81.0.
      auto chunks_wide = [&](auto check_c, auto sym_c) {
        constexpr int kBlockChunks = 128 / CHUNK_K;  // chunks per 128-column block
        static_assert(!kScaleAfter || CPW % kBlockChunks == 0, "a warp's stage columns are whole 128-column blocks");
        Consts cst[STRIPS];
        float sf[2][STRIPS][2];
        bool started = true;  // the block's first chunk is inside k (checked stages)
        mixed_gemm_detail::static_for<CPW>([&](auto c_c) {
          constexpr int c = decltype(c_c)::value;
          constexpr bool kFirst = c % kBlockChunks == 0, kLast = c % kBlockChunks == kBlockChunks - 1;
          const int chunk = wk * CPW + c;
          const int kl = chunk * CHUNK_K;
          bool inside = true;
          if constexpr (decltype(check_c)::value) inside = k_comp + kl < k_end;  // same for the whole warp
          if constexpr (kFirst) started = inside;
          if (inside) {
            if constexpr (kFirst) load_consts(cst, sf[0], kl, sym_c);
            uint4 wq[STRIPS];
            load_wq(wq, chunk);
            uint32_t b[STEPS][MBLK][2];
            mixed_gemm_detail::static_for<STEPS>([&](auto step_c) {
              constexpr int kStep = decltype(step_c)::value;
              load_b_step(step_c, b, c);
              tile.template step<kStep, 0, kFirst && kStep == 0, decltype(sym_c)::value>(wq, cst, b[kStep]);
            });
          }
          if constexpr (kLast) {
            if (started) tile.template flush<1>(sf);
          }
        });
      };
      // Symmetric weights get a loop copy of their own where that saves work (the choice is
      // the same for the whole grid): bf16 x 8-bit has a cheaper decode
      // (sm80_tiled_decode.cuh), and on the wide path the zero-point part of the constants is
      // then loop-invariant (t16n128 W4 f16, full stage: 348 -> ~320 instructions per
      // warp-stage, SASS).
      // dispatch: body(check_c, sym_c) with the split's last-stage test only where the stage
      // is not full, and the symmetric copy only where has_sym_path.
      const bool full_stage = k_comp + BLOCK_K <= k_end;
      auto dispatch = [&](auto&& body, auto has_sym_path) {
        auto by_stage = [&](auto sym_c) {
          if (full_stage) body(std::false_type{}, sym_c);
          else body(std::true_type{}, sym_c);
        };
        if constexpr (decltype(has_sym_path)::value) {
          if (p.zeros == nullptr) by_stage(std::true_type{});
          else by_stage(std::false_type{});
        } else {
          by_stage(std::false_type{});
        }
      };
      auto run_chunks = [&] {
        if constexpr (kScaleAfter) {
          if (gs == 0 || gs >= 128) return dispatch(chunks_wide, std::true_type{});
        }
        dispatch(chunks, std::integral_constant<bool, kSymDecode>{});
      };
      run_chunks();
      k_comp += BLOCK_K;
    };

    multistage_mainloop_pdl<STAGES>(iters, load_const, load_act, compute_stage);

    // Epilogue: reduce the k-warps into the fp32 tile, then out.
    float* red = reinterpret_cast<float*>(smem);
    Epilogue::template accumulate<STRIPS, MBLK, WARPS_K>(red, tile.acc, strip0, mblk0, wk, xr);
    EpilogueArgs e;
    e.channel_scales = gs == 0 ? p.scales : nullptr;
    e.bias = p.bias;
    e.out = p.out;
    e.m = p.m;
    e.n = p.n;
    const auto mode = static_cast<MixedGemmSplitMode>(p.split_mode);
    if (mode == MixedGemmSplitMode::kCluster) {
      Epilogue::store_cluster(red, m0, n0, valid_m, e);
    } else if (mode == MixedGemmSplitMode::kWorkspace) {
      Epilogue::store_partial(red, p.partials + static_cast<int64_t>(blockIdx.z) * p.m * p.n, m0,
                              n0, valid_m, p.n);
    } else {
      Epilogue::store(red, m0, n0, valid_m, e);
    }
  }
};

// Kernel entry: the only architecture guard of the family (CONVENTIONS.md). The SMALL
// variants are built for every architecture, sm_90 included, although no sm_90 GPU needs
// them: that is where the tests and compute-sanitizer run them (test
// sm80_mixed_gemm.small_shared_memory_variants).
template <typename T, int BITS, int CFG, bool SMALL>
__global__ void __launch_bounds__(kMixedGemmConfigs[CFG].threads(), kMixedGemmConfigs[CFG].min_ctas)
    sm80_mixed_gemm_kernel(const MixedGemmParams p) {
#if LOWBIT_HAS_SM80
  extern __shared__ __align__(128) unsigned char smem[];
  Sm80MixedGemm<T, BITS, CFG, SMALL>::run(p, smem);
#else
  LOWBIT_DEVICE_TRAP("sm80_mixed_gemm needs sm_80 or newer");
#endif
}

}  // namespace lowbit::cuda
