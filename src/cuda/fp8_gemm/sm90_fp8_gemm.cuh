// The Hopper fp8 GEMM kernel (sm_90a): TMA loads, wgmma, one producer warpgroup and one or
// two consumer warpgroups, a persistent walk over (tile, split) units, K promoted to fp32
// registers every 128 columns. Design and numbers: docs/kernels/fp8_gemm.md, "sm90_fp8_gemm".
//
// CTA = (kConsumers + 1) warpgroups. Warpgroups 0 .. kConsumers-1 compute (consumer c owns
// rows 64c .. 64c+63 of each wave of 64 kConsumers rows of the BM x BN tile, BM = 64 kConsumers
// kWaves); warpgroup kConsumers produces: one thread issues
// the TMA loads of A (BM x 128 bytes), W (BN x 128 bytes) and, in block mode, the BM
// activation scales of the K block, into a ring of kStages stages.
//
// Barriers (mbarrier.cuh), per stage s:
//   full[s]   count 1: the producer's arrive.expect_tx + the TMA bytes.
//   empty[s]  count 4 * kConsumers: lane 0 of every consumer warp, after the warp's wgmmas on
//             the stage completed and its reads of the stage's scales (__syncwarp orders the
//             other lanes' reads before lane 0's release-arrive).
// Both sides walk the same global sequence of K iterations `it` (units in the same order,
// the same K blocks per unit): stage it % kStages, round r = it / kStages. Consumers wait for
// full[s] phase r (parity r & 1); the producer, for r >= 1, waits for empty[s] phase r - 1
// (parity (r - 1) & 1) before refilling. Neither side can run two phases ahead of the other
// on one barrier, since each waits for the other's previous phase.
//
// Per K block the consumer computes tmp = A_kb * W_kb^T with four wgmma m64nBNk32 (the first
// with scale-d = 0), waits for them, then adds tmp into the fp32 accumulator: acc += tmp
// (kScaled) or acc += tmp * (sa[row, kb] * sw[n-block, kb]) (kBlock). The tensor core's fp8
// accumulator therefore never sums more than 128 products (its internal precision is below
// fp32's), in both modes. With two consumer warpgroups one's promotion overlaps the other's
// wgmmas.
//
// kKPair (Sm90Fp8Config::k_pair): two consumer warpgroups on one 64-row tile, each taking
// every other K iteration (warpgroup w: the iterations `it` with it % 2 == w) into its own fp32
// accumulator, so that one's wait and promotion overlap the other's wgmmas, as the two
// row halves do in the 128-row tiles; empty[s] then counts the 4 warps of the one warpgroup
// that reads stage s. kStages is even, so stage s always belongs to warpgroup s % 2: each full
// barrier has one reader, which has consumed the stage's previous round before it waits for
// the next. (With an odd count a warpgroup could wait on a stage whose previous round, the
// other warpgroup's, had not landed yet: two phases ahead, which a parity wait cannot tell
// from the phase it wants. The first build with 7 stages faulted so.) After the unit's K
// loop warpgroup 1 hands its accumulator to warpgroup 0 through shared memory (fragment
// order) and warpgroup 0 adds it (acc0 + acc1: a fixed order, deterministic) and runs the
// epilogue alone.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/fp8_gemm/sm90_fp8_gemm_params.hpp"
#include "cuda/ptx/cp_async_bulk.cuh"
#include "cuda/ptx/cvta.cuh"
#include "cuda/ptx/gpu_flag.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/named_barrier.cuh"
#include "cuda/ptx/smxx_config.hpp"
#include "cuda/ptx/tma.cuh"
#include "cuda/ptx/wgmma.cuh"
#include "cuda/ptx/wgmma_e4m3.cuh"
#include "cuda/ptx/wgmma_s8.cuh"

namespace lowbit::cuda::sm90fp8 {

// The unit -> (tile_m, tile_n, split) map and each split's K-block range, shared by the
// producer and the consumers (they must agree exactly). With stream-K the units are the
// tiles after the first sk_tiles (`tile0`).
struct Unit {
  int tile_m, tile_n, split, kb_begin, kb_end;
};
__device__ __forceinline__ Unit unit_of(const Sm90Fp8Params& p, int u, int tile0 = 0) {
  Unit r;
  r.split = u % p.splits;
  const int t = tile0 + u / p.splits;
  r.tile_m = t % p.tiles_m;  // m fastest: CTAs working at once share W tiles in L2
  r.tile_n = t / p.tiles_m;
  r.kb_begin = static_cast<int>(int64_t(r.split) * p.k_blocks / p.splits);
  r.kb_end = static_cast<int>(int64_t(r.split + 1) * p.k_blocks / p.splits);
  return r;
}

// Stream-K (kStreamK kernels): the K iterations of the first sk_tiles tiles, tile after tile,
// are one run of sk_tiles * k_blocks iterations; CTA c takes [sk_begin(c), sk_begin(c + 1))
// first, then its whole-K units. A tile that two or more CTAs share is finished by the part
// expected to end last (sm90_fp8_gemm_kernel); the others store themselves and go on.
__device__ __forceinline__ int64_t sk_begin(const Sm90Fp8Params& p, int c) {
  return int64_t(c) * (int64_t(p.sk_tiles) * p.k_blocks) / gridDim.x;
}
// The stream-K segment that starts at iteration `pos` (< end): tile st = pos / k_blocks.
__device__ __forceinline__ Unit sk_segment(const Sm90Fp8Params& p, int64_t pos, int64_t end, int& st) {
  st = static_cast<int>(pos / p.k_blocks);
  Unit r;
  r.split = 0;
  r.kb_begin = static_cast<int>(pos - int64_t(st) * p.k_blocks);
  r.kb_end = static_cast<int>(min(int64_t(p.k_blocks), r.kb_begin + (end - pos)));
  r.tile_m = st % p.tiles_m;
  r.tile_n = st / p.tiles_m;
  return r;
}

template <int BN>
__device__ __forceinline__ void wgmma_k32(float (&d)[BN / 2], uint64_t da, uint64_t db, bool acc) {
  static_assert(BN == 64 || BN == 96 || BN == 112 || BN == 128 || BN == 144 || BN == 192, "no wgmma wrapper");
  if constexpr (BN == 192)
    ptx::wgmma_m64n192k32_f32_e4m3(d, da, db, acc);
  else if constexpr (BN == 144)
    ptx::wgmma_m64n144k32_f32_e4m3(d, da, db, acc);
  else if constexpr (BN == 128)
    ptx::wgmma_m64n128k32_f32_e4m3(d, da, db, acc);
  else if constexpr (BN == 112)
    ptx::wgmma_m64n112k32_f32_e4m3(d, da, db, acc);
  else if constexpr (BN == 96)
    ptx::wgmma_m64n96k32_f32_e4m3(d, da, db, acc);
  else
    ptx::wgmma_m64n64k32_f32_e4m3(d, da, db, acc);
}

// int8 (sm90_int8_gemm): exact int32 accumulators.
template <int BN>
__device__ __forceinline__ void wgmma_k32_s8(int32_t (&d)[BN / 2], uint64_t da, uint64_t db, bool acc) {
  static_assert(BN == 64 || BN == 128 || BN == 192, "no s8 wgmma wrapper");
  if constexpr (BN == 192)
    ptx::wgmma_m64n192k32_s32_s8(d, da, db, acc);
  else if constexpr (BN == 128)
    ptx::wgmma_m64n128k32_s32_s8(d, da, db, acc);
  else
    ptx::wgmma_m64n64k32_s32_s8(d, da, db, acc);
}

// Block mode, BN = 96 / 112 / 144: calls f(std::integral_constant<int, hi>) for the run-time
// `hi` (a multiple of kStep in [kStep, kMax]; kMax = BN / 8: no second weight-scale block), so
// that each place of the boundary gets its own copy of the K loop (as BN = 192's two).
template <int kHi, int kStep, int kMax, typename F>
__device__ __forceinline__ void dispatch_hi_from(int hi, const F& f) {
  if constexpr (kHi >= kMax) {
    f(std::integral_constant<int, kMax>{});
  } else {
    if (hi == kHi)
      f(std::integral_constant<int, kHi>{});
    else
      dispatch_hi_from<kHi + kStep, kStep, kMax>(hi, f);
  }
}

__device__ __forceinline__ uint32_t pack_out(float a, float b, int bf16) {
  if (bf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
  const __half2 v = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ float2 load_bias2(const void* bias, int col, int bf16) {
  if (bias == nullptr) return make_float2(0.f, 0.f);
  if (bf16) return __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(bias)[col / 2]);
  return __half22float2(reinterpret_cast<const __half2*>(bias)[col / 2]);
}

// f(std::integral_constant<int, J>{}) for J = I .. N - 1, unrolled at compile time.
template <int I, int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    static_for<I + 1, N>(f);
  }
}

// kInt8 (the sm90_int8_gemm family, int8_gemm_common.hpp): A and W int8, the same tiles,
// stages, barriers, walk and epilogue; the four wgmmas per K block are s32.s8.s8 and
// accumulate in the same int32 registers over the whole K range of a unit (integer sums are
// exact: no per-block promotion), with block i + 1 issued before block i has retired
// (wgmma.wait_group 1; accumulating wgmmas of one shape need no fence between them). The
// epilogue converts acc - za[m] * wsum[n] (int64) to fp32 once, then scales as kScaled.
// Neither block scaling nor stream-K (whose fp32 parts would each need the zero-point term).
// kWaves > 1 (Sm90Fp8Config::waves): the tile has kWaves waves of 64 * kConsumers rows; per K
// block each consumer issues its four wgmmas once per wave into the one temporary and promotes
// them into that wave's accumulator, the stage released after the last wave. Not with int8
// or stream-K.
template <int kConsumers, int BN, int kStages, bool kBlock, bool kStreamK, bool kInt8 = false, int kWaves = 1,
          bool kEpiCopies = false, bool kKPair = false, bool kShortA = false>
__global__ void __launch_bounds__((kConsumers + 1) * 128, 1)
    sm90_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_w,
                         const __grid_constant__ CUtensorMap tmap_sa, const __grid_constant__ CUtensorMap tmap_out,
                         const Sm90Fp8Params p) {
#if LOWBIT_HAS_SM90A
  static_assert(!kInt8 || (!kBlock && !kStreamK), "int8: scaled mode without stream-K only");
  static_assert(kWaves == 1 || (!kInt8 && !kStreamK), "waves: fp8 without stream-K only");
  static_assert(!kEpiCopies || !kStreamK, "epilogue copies: not with stream-K");
  static_assert(!kKPair || (kConsumers == 2 && kWaves == 1 && !kStreamK && !kInt8 && !kEpiCopies),
                "K pair: two consumers, fp8, one wave, no stream-K");
  static_assert(!kKPair || kStages % 2 == 0, "K pair: an even stage count (each stage has one reader)");
  // The warpgroups with rows of their own (kKPair: one; its partner shares them).
  constexpr int kRowGroups = kKPair ? 1 : kConsumers;
  constexpr int kWaveRows = 64 * kRowGroups;
  constexpr int BM = kWaveRows * kWaves;
  constexpr int BK = kSm90Fp8BlockK;
  constexpr uint32_t kATile = BM * BK, kWTile = BN * BK;
  constexpr uint32_t kStageBytes = kATile + kWTile;
  constexpr uint32_t kTxBytes = kStageBytes + (kBlock ? BM * 4 : 0);

  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // 1024-byte alignment for the 128-byte swizzle (the dynamic shared window's start is only
  // guaranteed 16-byte aligned); the slack is counted in sm90_fp8_smem_bytes().
  const uint32_t raw = ptx::cvta_shared(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* const gbase = smem_raw + (base - raw);
  const uint32_t tiles = base;                                // stage s: A at s*kStageBytes, W after it
  // Output staging (splits == 1): per consumer warpgroup BN / kBoxCols boxes of 64 rows x
  // kBoxCols columns (kBoxCols = 64 / 32 / 16: rows of 128 / 64 / 32 bytes, swizzled over the
  // row: sm90_fp8_out_box_cols()), written from registers and stored by the TMA. Right after
  // the stages, so that every box is 1024-byte aligned: the swizzle permutes by address bits
  // 7..9 (128 B; 7..8 for 64 B, 7 for 32 B), and the TMA's pattern must match the one the
  // stores below assume.
  constexpr int kBoxCols = sm90_fp8_out_box_cols(BN);
  constexpr uint32_t kBoxRowBytes = 2 * kBoxCols;
  constexpr uint32_t kOutBox = 64 * kBoxRowBytes;
  constexpr uint32_t kOutBytes = kWaves * kRowGroups * (BN / kBoxCols) * kOutBox;
  // kKPair: warpgroup 1's accumulator handed to warpgroup 0 (64 x BN fp32, fragment order).
  constexpr uint32_t kPairBytes = kKPair ? 64u * BN * 4u : 0u;
  const uint32_t out_stage = base + kStages * kStageBytes;
  float* const sa_smem = reinterpret_cast<float*>(gbase + kStages * kStageBytes + kOutBytes);  // (kStages, BM)
  float2* const pair_smem = reinterpret_cast<float2*>(gbase + kStages * kStageBytes + kOutBytes + kStages * BM * 4);
  const uint32_t bars = out_stage + kOutBytes + kStages * BM * 4 + kPairBytes;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (kStages + s); };

  const int wg = threadIdx.x / 128;
  const int t = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full(s), 1);
      ptx::mbarrier_init(empty(s), 4 * kRowGroups);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == kConsumers) {
    // ---------------- producer ----------------
    // Two consumer warpgroups: the kernel is compiled for 168 registers per thread (384
    // threads, 1 CTA per SM); the producer gives most of its registers to the consumers.
    // One consumer: 256 threads fit 240 each, nothing to move.
    if constexpr (kConsumers == 2) ptx::setmaxnreg_dec<40>();
    if (t == 0) {
      ptx::tma_prefetch_descriptor(&tmap_a);
      ptx::tma_prefetch_descriptor(&tmap_w);
      if constexpr (kBlock) ptx::tma_prefetch_descriptor(&tmap_sa);
      uint32_t it = 0;
      // PDL (the host launches so on sm_90 without stream-K): the weight tiles of the first
      // `pre` iterations (at most one per stage, so no empty-barrier wait) are requested before
      // griddepcontrol.wait, their stage's transaction bytes announced in full; the
      // activation tiles (and block-mode activation scales), which the previous kernel may
      // write, after it. Without the attribute the wait returns at once.
      // A stage's bytes: kTxBytes, less the A rows a short box leaves out in the kShortA
      // instantiation (a single row tile, Sm90Fp8Params::a_short_bytes). A separate
      // instantiation so that the full-tile kernels keep a constant and their code: with the
      // run-time count in every kernel, gate_up at m = 256 ran 2-5% slower on m128n112 /
      // m256n128 in a two-round A/B (H200, docs/kernels/fp8_gemm.md, session 51).
      const uint32_t tx = kShortA ? kTxBytes - p.a_short_bytes : kTxBytes;
      uint32_t pre = 0;
      if constexpr (!kStreamK) {
        for (int u = blockIdx.x; u < p.units && pre < static_cast<uint32_t>(kStages); u += gridDim.x) {
          const Unit un = unit_of(p, u);
          for (int kb = un.kb_begin; kb < un.kb_end && pre < static_cast<uint32_t>(kStages); ++kb, ++pre) {
            ptx::mbarrier_arrive_expect_tx(full(static_cast<int>(pre)), tx);
            ptx::tma_load_2d(tiles + pre * kStageBytes + kATile, &tmap_w, kb * BK, un.tile_n * BN, full(static_cast<int>(pre)));
          }
        }
      }
      ptx::griddep_launch_dependents();
      ptx::griddep_wait();
      auto load_unit = [&](const Unit& un) {
        const int m0 = un.tile_m * BM, n0 = un.tile_n * BN;
        for (int kb = un.kb_begin; kb < un.kb_end; ++kb, ++it) {
          const int s = static_cast<int>(it % kStages);
          const uint32_t r = it / kStages;
          const uint32_t st = tiles + s * kStageBytes;
          if (it >= pre) {
            if (r > 0) ptx::mbarrier_wait_parity(empty(s), (r - 1) & 1);
            ptx::mbarrier_arrive_expect_tx(full(s), tx);
            ptx::tma_load_2d(st + kATile, &tmap_w, kb * BK, n0, full(s));
          }
          ptx::tma_load_2d(st, &tmap_a, kb * BK, m0, full(s));
          if constexpr (kBlock) ptx::tma_load_2d(ptx::cvta_shared(sa_smem + s * BM), &tmap_sa, m0, kb, full(s));
        }
      };
      if constexpr (kStreamK) {
        const int64_t end = sk_begin(p, blockIdx.x + 1);
        for (int64_t pos = sk_begin(p, blockIdx.x); pos < end;) {
          int st;
          const Unit un = sk_segment(p, pos, end, st);
          load_unit(un);
          pos += un.kb_end - un.kb_begin;
        }
        for (int u = blockIdx.x; u < p.units; u += gridDim.x) load_unit(unit_of(p, u, p.sk_tiles));
      } else {
        for (int u = blockIdx.x; u < p.units; u += gridDim.x) load_unit(unit_of(p, u));
      }
    }
    return;
  }

  // ---------------- consumers ----------------
  if constexpr (kConsumers == 2) ptx::setmaxnreg_inc<232>();
  // PDL: the consumers read activation scales and bias and write the output, workspace and
  // stream-K counters, all of which the previous kernel may touch: after its completion.
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  const int warp = t / 32, lane = t % 32;
  const int rwg = kKPair ? 0 : wg;  // the warpgroup's 64 rows in the wave
  const int row_in_tile = 64 * rwg + 16 * warp + lane / 4;  // and row_in_tile + 8
  const int col_in_frag = 2 * (lane % 4);                  // + 8 j
  float accw[kWaves][BN / 2];  // wave w: rows kWaveRows * w + row_in_tile (+ 8)
  float (&acc)[BN / 2] = accw[0];
  float t0[BN / 2];
  int32_t iacc[kInt8 ? BN / 2 : 1];  // int8: the tensor core's exact sums
  uint32_t it = 0;
  // A tile of BN columns covers one 128-row weight-scale block when BN divides 128, else
  // (BN = 96, 112, 144, 192) up to two: columns before `split_col` (in the tile) use block
  // n0 / 128. (BN <= 144 or BN = 192 with n0 a multiple of 64: never three.)
  constexpr bool kTwoScaleBlocks = (128 % BN) != 0;
  const int n_blocks = (p.n + 127) / 128;

  // The ring position of K iteration `i`: its stage i % kStages and the parity of its round
  // (i / kStages) & 1. kCarryPos: divided out once per unit, then carried from iteration to
  // iteration (next_pos), and the wgmma descriptors formed from stage 0's by an add, so that
  // the K loops do no division (a multiply-high sequence per use for kStages = 3, 5, 6) and
  // less address arithmetic (block mode: 10-17% fewer instructions per K block, docs/kernels/
  // fp8_gemm.md, v23). Otherwise both are computed from `i` where they are used, as before
  // v23: with the carried form the m128n192 and 256-row block kernels measured 3-10% slower
  // (ptxas's schedule of their loops, not their instruction count), the int8 kernels within
  // the noise; those keep the division form (their code unchanged).
  constexpr bool kCarryPos = !kInt8 && kWaves == 1 && BN != 192;
  struct Pos {
    uint32_t i;
    int s;
    uint32_t par;
  };
  auto pos_of = [](uint32_t i) { return Pos{i, static_cast<int>(i % kStages), (i / kStages) & 1u}; };
  auto next_pos = [&](Pos q) {
    if constexpr (kCarryPos)
      return q.s + 1 == kStages ? Pos{q.i + 1, 0, q.par ^ 1u} : Pos{q.i + 1, q.s + 1, q.par};
    else
      return pos_of(q.i + 1);
  };
  auto stage_of = [](Pos q) { return kCarryPos ? q.s : static_cast<int>(q.i % kStages); };
  auto parity_of = [](Pos q) { return kCarryPos ? q.par : (q.i / kStages) & 1u; };
  // Block mode: the thread's two activation scales of the K iteration at `q` and wave `w`
  // (rows g, g + 8), from its stage (arrived).
  auto read_sa = [&](Pos q, int w = 0) {
    const int r = stage_of(q) * BM + kWaveRows * w + row_in_tile;
    return make_float2(sa_smem[r], sa_smem[r + 8]);
  };
  // The wgmma descriptors of stage 0 (this warpgroup's A rows, the W tile); stage s and wave w
  // add their byte offset / 16 to the start-address field (bits 0..13), which cannot carry:
  // every shared address is below 2^18 (the field holds address bits 4..17).
  const uint64_t da0 = ptx::wgmma_desc_k_major_sw128(tiles + rwg * 64 * BK);
  const uint64_t db0 = ptx::wgmma_desc_k_major_sw128(tiles + kATile);
  auto desc_a = [&](int s, int w) {
    if constexpr (kCarryPos)
      return da0 + static_cast<uint32_t>((s * kStageBytes + kWaveRows * w * BK) >> 4);
    else
      return ptx::wgmma_desc_k_major_sw128(tiles + s * kStageBytes + (kWaveRows * w + rwg * 64) * BK);
  };
  auto desc_w = [&](int s) {
    if constexpr (kCarryPos)
      return db0 + static_cast<uint32_t>((s * kStageBytes) >> 4);
    else
      return ptx::wgmma_desc_k_major_sw128(tiles + s * kStageBytes + kATile);
  };
  // Issue the four wgmmas of the K iteration at `q` into `d` (one commit group), after waiting
  // for its stage unless `waited`. Block mode: also returns the iteration's activation scales,
  // read before the wgmmas are issued (or `a_pre`, read earlier by the caller). Where these
  // reads sit matters (docs/kernels/fp8_gemm.md, v8): after the wgmmas completed (v7) or after
  // the issue was slower.
  auto issue = [&](float (&d)[BN / 2], Pos q, bool waited = false, float2 a_pre = float2{}, int w = 0,
                   bool accumulate = false) {
    const int s = stage_of(q);
    if (!waited) ptx::mbarrier_wait_parity(full(s), parity_of(q));
    float2 a = make_float2(1.f, 1.f);
    if constexpr (kBlock) a = waited ? a_pre : read_sa(q, w);
    const uint64_t da = desc_a(s, w);
    const uint64_t db = desc_w(s);
    ptx::wgmma_fence_operand(d);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) wgmma_k32<BN>(d, da + 2 * kk, db + 2 * kk, accumulate || kk > 0);
    ptx::wgmma_commit_group();
    return a;
  };
  // The stage of the iteration at `q` is free again (one arrive per consumer warp).
  auto release = [&](Pos q) {
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(empty(stage_of(q)));
  };
  // The group of the iteration at `q` has completed: release its stage, promote d into acc
  // (block mode: times sa[row, kb] * sw[n block, kb]; `a` the activation scales issue() read,
  // `sw` the weight scales of the tile's one or two n blocks for that K block).
  // `hi_from` (a std::integral_constant): the first 8-column group of the tile that takes the
  // second n block's weight scale (BN / 8: none). A compile-time boundary, so that the
  // promotion is 4 FMUL + BN / 2 FFMA; a run-time one cost a select and a multiply per group
  // (BN = 192), two selects per group (BN = 112: block mode 14% slower than with these copies).
  // `w`: the wave (kWaves > 1: the stage is released after the last wave only).
  auto finish = [&](auto hi_from, float (&d)[BN / 2], Pos q, float2 a, float2 sw, int w = 0) {
    float (&acc)[BN / 2] = accw[w];
    ptx::wgmma_fence_operand(d);
    if (w == kWaves - 1) release(q);
    if constexpr (kBlock) {
      constexpr int kHiFrom = decltype(hi_from)::value;
      const float s0 = a.x * sw.x, s1 = a.y * sw.x, s0b = a.x * sw.y, s1b = a.y * sw.y;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const float x0 = j >= kHiFrom ? s0b : s0, x1 = j >= kHiFrom ? s1b : s1;
        acc[4 * j + 0] = fmaf(d[4 * j + 0], x0, acc[4 * j + 0]);
        acc[4 * j + 1] = fmaf(d[4 * j + 1], x0, acc[4 * j + 1]);
        acc[4 * j + 2] = fmaf(d[4 * j + 2], x1, acc[4 * j + 2]);
        acc[4 * j + 3] = fmaf(d[4 * j + 3], x1, acc[4 * j + 3]);
      }
    } else {
      (void)hi_from;
      (void)a;
      (void)sw;
#pragma unroll
      for (int j = 0; j < BN / 2; ++j) acc[j] += d[j];
    }
  };

  // One unit or stream-K segment: `sk` its stream-K tile (-1: none), `first_sk` whether it is
  // this CTA's first stream-K segment (which of its two part slots it uses).
  auto compute_unit = [&](const Unit& un, int sk, bool first_sk) {
    (void)sk;
    (void)first_sk;
    const int m0 = un.tile_m * BM, n0 = un.tile_n * BN;
#pragma unroll
    for (int w = 0; w < kWaves; ++w)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) accw[w][i] = 0.f;
    // Block mode, weight scales: lane l of every consumer warp holds sw[n block, kb] for
    // kb = kb_begin + 32 c + l of the current run c of 32 K blocks, the next run loaded 32
    // iterations ahead (one coalesced load per warp and run); iteration i takes its value with
    // a shuffle before its wgmmas are issued. (Up to v7 one __ldg per K block, which ptxas
    // placed among the wgmmas and the next block consumed; with the weight scales constant
    // the block mode then ran at the tensor mode's speed, with those loads 15-20% slower at
    // m >= 1024: docs/kernels/fp8_gemm.md, v8.)
    const int nb0 = n0 / 128;
    const int nb1 = kTwoScaleBlocks ? min((n0 + BN - 1) / 128, n_blocks - 1) : nb0;
    const int split_col = (nb0 + 1) * 128 - n0;
    const float* sw0 = p.sw + static_cast<int64_t>(nb0) * p.k_blocks;
    const float* sw1 = p.sw + static_cast<int64_t>(nb1) * p.k_blocks;
    auto load_sw_run = [&](int kb) {  // this lane's entry of the run starting at kb
      if constexpr (!kBlock) {
        (void)kb;
        return make_float2(1.f, 1.f);
      } else {
        const int k = kb + lane;
        if (k >= un.kb_end) return make_float2(0.f, 0.f);
        return make_float2(__ldg(sw0 + k), kTwoScaleBlocks ? __ldg(sw1 + k) : 0.f);
      }
    };
    const int nk = un.kb_end - un.kb_begin;
    const bool sk_part = kStreamK && sk >= 0 && (un.kb_begin > 0 || un.kb_end < p.k_blocks);
    auto k_loop = [&](auto hi_from) {
      float2 sw_run = load_sw_run(un.kb_begin), sw_ahead = make_float2(0.f, 0.f);
      // Block j's weight scales (j = 0, 1, ... in order): a shuffle from the current run; the
      // next run is loaded when one starts.
      auto sw_of = [&](int j) {
        if constexpr (!kBlock) {
          (void)j;
          return make_float2(1.f, 1.f);
        } else {
          if ((j & 31) == 0) {
            if (j > 0) sw_run = sw_ahead;
            if (j + 32 < nk) sw_ahead = load_sw_run(un.kb_begin + j + 32);
          }
          return make_float2(__shfl_sync(0xffffffffu, sw_run.x, j & 31),
                             kTwoScaleBlocks ? __shfl_sync(0xffffffffu, sw_run.y, j & 31) : 0.f);
        }
      };
      // Block mode with two consumer warpgroups (m >= 128) and no stream-K: block i + 1's
      // stage is waited for and its scales read while block i's wgmmas run, so that neither
      // the wait nor the reads sit between block i's completion and block i + 1's issue
      // (v8: Suite 1 block M = 1024 / 4096 -3 / -5% against reading them just before the
      // issue). The stream-K kernels keep the loop below (this one spilled there), as do the
      // one-consumer configurations (small m: there the earlier wait would hold block i's
      // promotion and stage release back behind the next stage's arrival).
      // With waves, the steps are (block, wave) pairs: a wave's successor in the same block
      // needs no wait, only its rows' activation scales.
      if constexpr (kKPair) {
        // This warpgroup's K blocks: i = i0, i0 + 2, ... with (it + i) % 2 == wg, i.e. its own
        // stages (positions carried two at a time).
        // Weight scales: the run of 32 holding block i, loaded when i enters it (i steps by 2,
        // so by at most one run), the next run one ahead.
        [[maybe_unused]] int run = 0;
        float2 sw_run = load_sw_run(un.kb_begin);
        float2 sw_ahead = nk > 32 ? load_sw_run(un.kb_begin + 32) : make_float2(0.f, 0.f);
        const int i0 = static_cast<int>((it + static_cast<uint32_t>(wg)) & 1u);
        Pos cur = pos_of(it + i0);
        for (int i = i0; i < nk; i += 2) {
          float2 sw = make_float2(1.f, 1.f);
          if constexpr (kBlock) {
            if ((i >> 5) != run) {
              run = i >> 5;
              sw_run = sw_ahead;
              if (32 * (run + 1) < nk) sw_ahead = load_sw_run(un.kb_begin + 32 * (run + 1));
            }
            sw = make_float2(__shfl_sync(0xffffffffu, sw_run.x, i & 31),
                             kTwoScaleBlocks ? __shfl_sync(0xffffffffu, sw_run.y, i & 31) : 0.f);
          }
          const float2 a = issue(t0, cur, false);
          ptx::wgmma_wait_group<0>();
          finish(hi_from, t0, cur, a, sw);
          cur = next_pos(next_pos(cur));
        }
      } else if constexpr (kBlock && kConsumers == 2 && !kStreamK) {
        if (nk == 0) return;
        float2 sw = sw_of(0);
        Pos cur = pos_of(it);
        float2 a = issue(t0, cur, false);
        for (int i = 0; i < nk; ++i) {
          if constexpr (!kCarryPos) cur = pos_of(it + i);
          // Block i + 1's position (without kCarryPos computed where used, as before v23).
          const Pos nxt_carried = next_pos(cur);
          auto nxt = [&]() { return kCarryPos ? nxt_carried : pos_of(it + i + 1); };
#pragma unroll
          for (int w = 0; w < kWaves; ++w) {
            const bool last = w == kWaves - 1;
            float2 a_next = a, sw_next = sw;
            if (!last) {
              a_next = read_sa(cur, w + 1);
            } else if (i + 1 < nk) {
              ptx::mbarrier_wait_parity(full(stage_of(nxt())), parity_of(nxt()));
              a_next = read_sa(nxt());
              sw_next = sw_of(i + 1);
            }
            ptx::wgmma_wait_group<0>();
            finish(hi_from, t0, cur, a, sw, w);
            if (!last)
              issue(t0, cur, true, a_next, w + 1);
            else if (i + 1 < nk)
              issue(t0, nxt(), true, a_next);
            a = a_next;
            if (last) sw = sw_next;
          }
          cur = nxt_carried;
        }
      } else {
        Pos cur = pos_of(it);
        for (int i = 0; i < nk; ++i) {
          if constexpr (!kCarryPos) cur = pos_of(it + i);
          const float2 sw = sw_of(i);
#pragma unroll
          for (int w = 0; w < kWaves; ++w) {
            const float2 a = issue(t0, cur, false, float2{}, w);
            ptx::wgmma_wait_group<0>();
            finish(hi_from, t0, cur, a, sw, w);
          }
          cur = next_pos(cur);
        }
      }
    };
    // int8: one accumulation over the unit's K blocks; block i's stage is released once
    // block i + 1 is issued and block i has retired.
    auto int8_loop = [&]() {
#pragma unroll
      for (int i = 0; i < (kInt8 ? BN / 2 : 1); ++i) iacc[i] = 0;
      // (kInt8 kernels: not kCarryPos, each position from the iteration index.)
      for (int i = 0; i < nk; ++i) {
        const uint32_t ii = it + i;
        const Pos cur = pos_of(ii);
        const int s = stage_of(cur);
        ptx::mbarrier_wait_parity(full(s), parity_of(cur));
        const uint64_t da = desc_a(s, 0);
        const uint64_t db = desc_w(s);
        ptx::wgmma_fence_operand(iacc);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 32; ++kk) {
          if constexpr (kInt8) wgmma_k32_s8<BN>(iacc, da + 2 * kk, db + 2 * kk, true);
        }
        ptx::wgmma_commit_group();
        ptx::wgmma_wait_group<1>();
        ptx::wgmma_fence_operand(iacc);
        if (i > 0) release(pos_of(ii - 1));
      }
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(iacc);
      if (nk > 0) release(pos_of(it + nk - 1));
    };
    // Tensor / row modes (no per-block scale), one wave: the K blocks in chains of kChain,
    // each chain accumulated in the temporary by the tensor core (the first block with
    // scale-d = 0), block j + 1 issued before block j retired (wgmma.wait_group 1, int8_loop's
    // schedule: nothing reads the temporary while a chain runs), then one promotion
    // acc += t0. Promoting once per block (k_loop) leaves the tensor core idle between a
    // block's completion and the next issue once per block; a chain of two leaves that gap
    // once per two blocks, and fp8 wgmma's limited-precision accumulation still runs over at
    // most 256 products before each fp32 promotion (docs/kernels/fp8_gemm.md, v33: H200
    // Suite 1 per-tensor M = 4096 1479-1491 -> 1462-1469 us; rel err at k = 14336 1.662e-3 ->
    // 1.668e-3; chains of four no faster; the two-wave m256n128 kernels chained wave by wave
    // 10-12% slower, so they keep k_loop).
    constexpr int kChain = (!kInt8 && !kBlock && !kStreamK && !kKPair && kWaves == 1) ? 2 : 1;
    auto chain_loop = [&]() {
      float (&acc)[BN / 2] = accw[0];
      // The chain of kLen blocks from block i. Chain positions are compile-time constants
      // (unrolled), so that the waits sit in no path ptxas could take for divergent (C7518
      // serializes the wgmmas there).
      auto chain = [&](int i, auto len_c) {
        constexpr int kLen = decltype(len_c)::value;
        static_for<0, kLen>([&](auto j_c) {
          constexpr int j = decltype(j_c)::value;
          const Pos cur = pos_of(it + i + j);
          issue(t0, cur, false, float2{}, 0, j > 0);
          // Block j - 1 has retired once at most block j is in flight; the last waits for all.
          ptx::wgmma_wait_group<(j < kLen - 1) ? 1 : 0>();
          ptx::wgmma_fence_operand(t0);
          if constexpr (j > 0) release(pos_of(it + i + j - 1));
          if constexpr (j == kLen - 1) {
            release(cur);
#pragma unroll
            for (int c = 0; c < BN / 2; ++c) acc[c] += t0[c];
          }
        });
      };
      int i = 0;
      for (; i + kChain <= nk; i += kChain) chain(i, std::integral_constant<int, kChain>{});
      for (; i < nk; ++i) chain(i, std::integral_constant<int, 1>{});
    };
    if constexpr (kInt8) {
      int8_loop();
    } else if constexpr (kChain > 1) {
      chain_loop();
    } else if constexpr (kBlock && kTwoScaleBlocks && BN == 192) {
      // BN = 192: n0 is a multiple of 64, so the second n block starts at column 64 or 128.
      if (split_col == 64)
        k_loop(std::integral_constant<int, 8>{});
      else
        k_loop(std::integral_constant<int, 16>{});
    } else if constexpr (kBlock && kTwoScaleBlocks) {
      // n0 a multiple of gcd(BN, 128): the boundary at any such step of the tile (split_col >=
      // BN: the whole tile in the first block); one loop copy per place.
      constexpr int kStep = (BN % 32 == 0 ? 32 : 16) / 8;
      dispatch_hi_from<kStep, kStep, BN / 8>(min(split_col, BN) / 8, [&](auto hi_from) { k_loop(hi_from); });
    } else {
      k_loop(std::integral_constant<int, BN / 8>{});
    }
    // Block mode with two consumers: the loop's last iteration issues nothing, so no wgmma is
    // in flight here, but ptxas cannot tell (the issue sits behind `i + 1 < nk`) and injected
    // this same wait itself, with an info line per kernel (C7517) in every build. Made explicit:
    // the SASS is unchanged.
    if constexpr (kBlock && kConsumers == 2 && !kStreamK && !kKPair) ptx::wgmma_wait_group<0>();
    it += nk;

    // ---------------- K pair: warpgroup 1's sums to warpgroup 0 ----------------
    // Both warpgroups pass the same two barrier instructions (bar.sync is .aligned: synccheck
    // flagged a first version in which they reached barrier 4 from two places).
    if constexpr (kKPair) {
      float2* const x = pair_smem + t;
      if (wg == 1) {
#pragma unroll
        for (int j2 = 0; j2 < BN / 4; ++j2) x[128 * j2] = make_float2(acc[2 * j2], acc[2 * j2 + 1]);
      }
      ptx::named_barrier_sync(3, 256);  // warpgroup 1's sums stored
      if (wg == 0) {
#pragma unroll
        for (int j2 = 0; j2 < BN / 4; ++j2) {
          const float2 v = x[128 * j2];
          acc[2 * j2] += v.x;
          acc[2 * j2 + 1] += v.y;
        }
      }
      ptx::named_barrier_sync(4, 256);  // read: the buffer is free for the next unit
      if (wg == 1) return;
    }

    // ---------------- stream-K: a part of a tile ----------------
    // Each consumer warpgroup handles its 64 rows on its own. Every CTA runs its stream-K
    // range first, all from the start of the kernel at about the same speed, so the part of a
    // tile that ends last is known in advance: the one whose segment ends furthest into its
    // CTA's range (ties: the lowest CTA). That part finishes the tile; the others store
    // themselves in their CTA's slot (its first or its last stream-K segment), count
    // themselves stored (gpu_flag.cuh: release, no wait) and go on. A finisher waits only for
    // higher CTAs' first segments (or their whole ranges), which come before anything those
    // CTAs could wait for; grid <= SMs, and with CTAs dispatched in index order the wait ends
    // even when other work holds SMs (docs/kernels/fp8_gemm.md, "Stream-K"). The finisher
    // adds the parts to its registers in K order, ((p0 + p1) + p2) + ..., its own part taking
    // its place (x + y = y + x exactly): the same bits every run.
    if constexpr (kStreamK) {
      if (sk_part) {
        constexpr int kSlotFloats = BM * BN;  // fragment order: float2 (j2, t) at 2 (128 j2 + t)
        auto slot_of = [&](int c, bool first) {
          return reinterpret_cast<float2*>(p.sk_partial + (int64_t(2 * c + (first ? 0 : 1)) * kSlotFloats +
                                                            wg * (kSlotFloats / kConsumers))) + t;
        };
        // The tile's parts: CTAs c_first.. whose iteration ranges meet it (empty ranges
        // skipped); the finisher: the largest (end of the part - start of its CTA's range).
        const int64_t tile_lo = int64_t(sk) * p.k_blocks, tile_hi = tile_lo + p.k_blocks;
        const int grid = static_cast<int>(gridDim.x);
        int c_first = static_cast<int>(tile_lo * grid / (int64_t(p.sk_tiles) * p.k_blocks));
        while (c_first + 1 < grid && sk_begin(p, c_first + 1) <= tile_lo) ++c_first;
        int parts = 0, finisher = -1;
        int64_t latest = -1;
        for (int c = c_first; c < grid; ++c) {
          const int64_t b = sk_begin(p, c);
          if (b >= tile_hi) break;
          const int64_t e = sk_begin(p, c + 1);
          if (e == b) continue;
          ++parts;
          const int64_t ends_at = min(e, tile_hi) - b;
          if (ends_at > latest) {
            latest = ends_at;
            finisher = c;
          }
        }
        int* const stored = p.sk_counters + sk * kConsumers + wg;
        if (finisher != static_cast<int>(blockIdx.x)) {
          float2* const mine = slot_of(blockIdx.x, first_sk);
#pragma unroll
          for (int j2 = 0; j2 < BN / 4; ++j2) __stcg(mine + 128 * j2, make_float2(acc[2 * j2], acc[2 * j2 + 1]));
          ptx::named_barrier_sync(1 + wg, 128);
          if (t == 0) ptx::red_release_gpu_add(stored, 1);
          return;
        }
        if (t == 0) ptx::wait_eq_acquire_gpu(stored, parts - 1);
        ptx::named_barrier_sync(1 + wg, 128);
        // The sum in K order, ((p0 + p1) + p2) + ...: with at most one part before this CTA's,
        // its own registers take their place (p0 + own = own + p0 exactly); with more, it
        // stores its own part too and sums every part from memory.
        int before = 0;
        for (int c = c_first; c < static_cast<int>(blockIdx.x); ++c) before += sk_begin(p, c + 1) > sk_begin(p, c);
        const bool from_memory = before >= 2;
        if (from_memory) {
          float2* const mine = slot_of(blockIdx.x, first_sk);
#pragma unroll
          for (int j2 = 0; j2 < BN / 4; ++j2) __stcg(mine + 128 * j2, make_float2(acc[2 * j2], acc[2 * j2 + 1]));
        }
        bool first_part = true;
        for (int c = c_first; c < grid; ++c) {
          const int64_t b = sk_begin(p, c);
          if (b >= tile_hi) break;
          if (sk_begin(p, c + 1) == b) continue;
          if (c == static_cast<int>(blockIdx.x) && !from_memory) {
            first_part = false;
            continue;
          }
          const float2* src = slot_of(c, b >= tile_lo);
#pragma unroll
          for (int j2 = 0; j2 < BN / 4; ++j2) {
            const float2 v = __ldcg(src + 128 * j2);
            if (first_part && from_memory) {
              acc[2 * j2] = v.x;
              acc[2 * j2 + 1] = v.y;
            } else {
              acc[2 * j2] = first_part ? v.x + acc[2 * j2] : acc[2 * j2] + v.x;
              acc[2 * j2 + 1] = first_part ? v.y + acc[2 * j2 + 1] : acc[2 * j2 + 1] + v.y;
            }
          }
          first_part = false;
        }
      }
    }

    // Epilogue scales (tensor / row modes), loaded before any store so that no load waits
    // behind a store it might alias.
    // (kWaves > 1: once per wave, rows kWaveRows * wv on.)
    if constexpr (!kBlock) {
      auto scale_wave = [&](float (&acc)[BN / 2], int wv) {
        const int r0 = min(m0 + kWaveRows * wv + row_in_tile, p.m - 1);
        const int r1 = min(m0 + kWaveRows * wv + row_in_tile + 8, p.m - 1);
        if constexpr (kInt8) {
          // acc - za[m] * wsum[n], exact in int64 (|acc| < 2^31, |za * wsum| < 2^31 * 2^7), then
          // one rounding to fp32. With split-K only split 0 carries the zero-point term.
          const bool zp = p.za != nullptr && un.split == 0;
          const int64_t z0 = zp ? p.za[r0] : 0, z1 = zp ? p.za[r1] : 0;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const int col = min(n0 + 8 * j + col_in_frag, p.n - 2);
            const int64_t w0 = zp ? p.wsum[col] : 0, w1 = zp ? p.wsum[col + 1] : 0;
            acc[4 * j + 0] = static_cast<float>(int64_t(iacc[4 * j + 0]) - z0 * w0);
            acc[4 * j + 1] = static_cast<float>(int64_t(iacc[4 * j + 1]) - z0 * w1);
            acc[4 * j + 2] = static_cast<float>(int64_t(iacc[4 * j + 2]) - z1 * w0);
            acc[4 * j + 3] = static_cast<float>(int64_t(iacc[4 * j + 3]) - z1 * w1);
          }
        }
        const float sa0 = p.sa[p.sa_per_row ? r0 : 0], sa1 = p.sa[p.sa_per_row ? r1 : 0];
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = min(n0 + 8 * j + col_in_frag, p.n - 2);
          const float2 w = p.sw_per_row ? make_float2(p.sw[col], p.sw[col + 1]) : make_float2(p.sw[0], p.sw[0]);
          acc[4 * j + 0] = (acc[4 * j + 0] * sa0) * w.x;
          acc[4 * j + 1] = (acc[4 * j + 1] * sa0) * w.y;
          acc[4 * j + 2] = (acc[4 * j + 2] * sa1) * w.x;
          acc[4 * j + 3] = (acc[4 * j + 3] * sa1) * w.y;
        }
      };
#pragma unroll
      for (int wv = 0; wv < kWaves; ++wv) scale_wave(accw[wv], wv);
    }

    if (p.splits == 1) {
      // ---------------- epilogue: registers -> swizzled smem -> TMA store ----------------
      // Wait until this warpgroup's previous tile store has read the staging boxes.
      if (t == 0) ptx::tma_store_wait_read();
      ptx::named_barrier_sync(1 + wg, 128);
      // Wave w's boxes follow wave w - 1's (kWaves x kConsumers x BN / kBoxCols boxes).
      auto boxes_of = [&](int w) { return out_stage + (w * kRowGroups + rwg) * (BN / kBoxCols) * kOutBox; };
      if constexpr (kEpiCopies) {
        // One copy of the staging loop per output dtype and bias / no bias, chosen once per
        // tile: with both at run time every store carried an f16 and a bf16 conversion
        // (predicated) and a bias add even without a bias, ~190 of the epilogue's ~675
        // instructions per thread (m256n128; docs/kernels/fp8_gemm.md, v28). Only in the
        // configurations marked so (`epilogue_copies`): in every kernel the K loop's code
        // changed with it, 4-12% slower at long k.
        auto stage_out = [&](auto bf16_c, auto bias_c) {
          constexpr int kBf16 = decltype(bf16_c)::value ? 1 : 0;
          constexpr bool kBias = decltype(bias_c)::value;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const int col = 8 * j + col_in_frag;  // in the tile
            float2 b = make_float2(0.f, 0.f);
            if constexpr (kBias) b = load_bias2(p.bias, min(n0 + col, p.n - 2), kBf16);
#pragma unroll
            for (int wh = 0; wh < 2 * kWaves; ++wh) {
              const int w = wh / 2, h = wh % 2;
              const uint32_t my_boxes = boxes_of(w);
              const int r = 16 * warp + lane / 4 + 8 * h;  // row in the warpgroup's 64
              const int cb = col % kBoxCols;               // column in the box
              // The swizzle over a row of kBoxRowBytes: 16-byte chunk (cb / 8) of row r sits at
              // chunk (cb / 8) ^ (address bits 7.. of the row's start, as many bits as the row
              // has chunk-index bits): r % 8 for 128-byte rows, (r / 2) % 4 for 64, (r / 4) % 2
              // for 32.
              const int swz = static_cast<int>((r * kBoxRowBytes) >> 7) & static_cast<int>(kBoxRowBytes / 16 - 1);
              const uint32_t addr = my_boxes + (col / kBoxCols) * kOutBox + r * kBoxRowBytes +
                                    ((((cb / 8) ^ swz) * 16) | ((cb % 8) * 2));
              float v0 = accw[w][4 * j + 2 * h], v1 = accw[w][4 * j + 2 * h + 1];
              if constexpr (kBias) {
                v0 += b.x;
                v1 += b.y;
              }
              const uint32_t v = pack_out(v0, v1, kBf16);
              asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
            }
          }
        };
        using T = std::true_type;
        using F = std::false_type;
        if (p.out_bf16) {
          if (p.bias != nullptr)
            stage_out(T{}, T{});
          else
            stage_out(T{}, F{});
        } else {
          if (p.bias != nullptr)
            stage_out(F{}, T{});
          else
            stage_out(F{}, F{});
        }
      } else {
        // The run-time loop, as before v28 (a single loop for both, with the dtype and the bias
        // as run-time tags here, changed the register allocation of m128n192's stream-K kernel).
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = 8 * j + col_in_frag;  // in the tile
          float2 b = make_float2(0.f, 0.f);
          if (p.bias != nullptr) b = load_bias2(p.bias, min(n0 + col, p.n - 2), p.out_bf16);
#pragma unroll
          for (int wh = 0; wh < 2 * kWaves; ++wh) {
            const int w = wh / 2, h = wh % 2;
            const uint32_t my_boxes = boxes_of(w);
            const int r = 16 * warp + lane / 4 + 8 * h;  // row in the warpgroup's 64
            const int cb = col % kBoxCols;               // column in the box
            // The swizzle over a row of kBoxRowBytes: 16-byte chunk (cb / 8) of row r sits at
            // chunk (cb / 8) ^ (address bits 7.. of the row's start, as many bits as the row has
            // chunk-index bits): r % 8 for 128-byte rows, (r / 2) % 4 for 64, (r / 4) % 2 for 32.
            const int swz = static_cast<int>((r * kBoxRowBytes) >> 7) & static_cast<int>(kBoxRowBytes / 16 - 1);
            const uint32_t addr = my_boxes + (col / kBoxCols) * kOutBox + r * kBoxRowBytes +
                                  ((((cb / 8) ^ swz) * 16) | ((cb % 8) * 2));
            const uint32_t v = pack_out(accw[w][4 * j + 2 * h] + b.x, accw[w][4 * j + 2 * h + 1] + b.y, p.out_bf16);
            asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
          }
        }
      }
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(1 + wg, 128);
      if (t == 0) {
#pragma unroll
        for (int w = 0; w < kWaves; ++w) {
          // A wave wholly past m stores nothing (the TMA would clip every row anyway).
          if (kWaves > 1 && m0 + kWaveRows * w + 64 * rwg >= p.m) break;
#pragma unroll
          for (int b = 0; b < BN / kBoxCols; ++b)
            ptx::tma_store_2d(&tmap_out, boxes_of(w) + b * kOutBox, n0 + kBoxCols * b, m0 + kWaveRows * w + 64 * rwg);
        }
        ptx::tma_store_commit();
      }
      return;
    }

    // ---------------- split-K: fp32 partial sums -> workspace ----------------
#pragma unroll
    for (int wh = 0; wh < 2 * kWaves; ++wh) {
      const int w = wh / 2, h = wh % 2;
      const float (&acc)[BN / 2] = accw[w];
      const int row = m0 + kWaveRows * w + row_in_tile + 8 * h;
      if (row >= p.m) continue;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = n0 + 8 * j + col_in_frag;
        if (col >= p.n) continue;
        const int64_t idx = static_cast<int64_t>(un.split) * p.m * p.n + static_cast<int64_t>(row) * p.n + col;
        *reinterpret_cast<float2*>(p.partial + idx) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      }
    }
  };

  if constexpr (kStreamK) {
    const int64_t end = sk_begin(p, blockIdx.x + 1);
    bool first_sk = true;
    for (int64_t pos = sk_begin(p, blockIdx.x); pos < end;) {
      int st;
      const Unit un = sk_segment(p, pos, end, st);
      compute_unit(un, st, first_sk);
      first_sk = false;
      pos += un.kb_end - un.kb_begin;
    }
    for (int u = blockIdx.x; u < p.units; u += gridDim.x) compute_unit(unit_of(p, u, p.sk_tiles), -1, false);
  } else {
    for (int u = blockIdx.x; u < p.units; u += gridDim.x) compute_unit(unit_of(p, u), -1, false);
  }
  // The staging boxes must stay valid until the last TMA store has read them.
  if (t == 0) ptx::tma_store_wait_all();
#else
  LOWBIT_DEVICE_TRAP("sm90_fp8_gemm_kernel needs sm_90a");
#endif
}

// out = sum_s partial[s] (+ bias), 4 outputs per thread (n % 16 == 0, so m * n % 4 == 0 and
// a group of 4 never crosses a row). Fixed summation order: deterministic. A template so that
// the translation units including this header (fp8 and int8 kernels) share one definition.
// kSplits = 0: any p.splits, one split's load after another (the loop's trip count is known
// only at run time). kSplits > 0 (p.splits must equal it): the kSplits loads of a group are
// issued together (`__ldcg`: the partials were written by the other kernel, read once, from
// L2), so a thread waits for one L2 round trip instead of kSplits, then added in split order:
// the same bits as kSplits = 0. Only for 4 splits (fp8_gemm.md v25 / v29: at 2 splits the
// batched form measured slower).
template <typename Params, int kSplits = 0>
__global__ void sm90_fp8_reduce_kernel(const Params p) {
  // PDL (sm90_fp8_gemm_reduce): the GEMM kernel's partial sums are complete and visible only
  // after this wait (without the launch attribute it returns at once); the next kernel may
  // launch now, its own wait covering this kernel's writes.
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  const int64_t total4 = static_cast<int64_t>(p.m) * p.n / 4;
  const int64_t mn = static_cast<int64_t>(p.m) * p.n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total4; i += int64_t(gridDim.x) * blockDim.x) {
    float4 a;
    if constexpr (kSplits > 0) {
      float4 part[kSplits];
#pragma unroll
      for (int s = 0; s < kSplits; ++s) part[s] = __ldcg(reinterpret_cast<const float4*>(p.partial + s * mn) + i);
      a = part[0];
#pragma unroll
      for (int s = 1; s < kSplits; ++s) {
        a.x += part[s].x;
        a.y += part[s].y;
        a.z += part[s].z;
        a.w += part[s].w;
      }
    } else {
      a = reinterpret_cast<const float4*>(p.partial)[i];
      for (int s = 1; s < p.splits; ++s) {
        const float4 b = reinterpret_cast<const float4*>(p.partial + s * mn)[i];
        a.x += b.x;
        a.y += b.y;
        a.z += b.z;
        a.w += b.w;
      }
    }
    const int col = static_cast<int>((4 * i) % p.n);
    const float2 b0 = load_bias2(p.bias, col, p.out_bf16), b1 = load_bias2(p.bias, col + 2, p.out_bf16);
    uint2 o;
    o.x = pack_out(a.x + b0.x, a.y + b0.y, p.out_bf16);
    o.y = pack_out(a.z + b1.x, a.w + b1.y, p.out_bf16);
    reinterpret_cast<uint2*>(p.out)[i] = o;
  }
}

}  // namespace lowbit::cuda::sm90fp8
