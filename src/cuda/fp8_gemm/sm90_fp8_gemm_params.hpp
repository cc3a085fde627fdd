// Internal: what the host side of sm90_fp8_gemm passes to its kernels, and the table of
// compiled tile configurations. Host and device code include it (no device code here).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "lowbit/status.hpp"

namespace lowbit::cuda {

// A compiled configuration: BM = 64 * consumers * waves rows (each consumer warpgroup owns
// 64 rows per wave), BN columns, BK = 128 (one fp8 row of 128 bytes = the 128-byte swizzle
// span = one scale block of the block mode), `stages` shared-memory stages of A and W tiles.
// `int8`: also instantiated for sm90_int8_gemm (the plan offers the others to fp8 only).
// `waves` > 1: per K block each consumer runs its wgmmas once per wave of 64 * consumers rows
// into one temporary, promoting each into that wave's accumulator (256-row tiles: the W tile
// of a stage serves twice the rows); fp8 only, no stream-K.
// `epilogue_copies`: the epilogue's staging loop compiled once per output dtype and bias /
// no bias, chosen per tile (fewer instructions per tile; the K loop's code changes with it,
// so it is a configuration of its own, for the plans it measured faster on: the short-k rule).
struct Sm90Fp8Config {
  int consumers;
  int block_n;
  int stages;
  const char* tag;
  bool int8 = true;
  int waves = 1;
  bool epilogue_copies = false;
  // `k_pair`: the two consumers share one 64-row tile, each taking every other K block
  // (sm90_fp8_gemm.cuh, kKPair); fp8 only, no stream-K.
  bool k_pair = false;
  constexpr int block_m() const { return 64 * (k_pair ? 1 : consumers) * waves; }
};
inline constexpr Sm90Fp8Config kSm90Fp8Configs[] = {
    {1, 128, 8, "m64n128"},   // small m (decode): 24 KB per stage, 192 KB in flight per SM
    {2, 128, 5, "m128n128"},  // large m: 32 KB per stage, two consumer warpgroups
    {1, 64, 10, "m64n64"},    // small m and small n (more tiles to spread over the SMs)
    {2, 192, 4, "m128n192"},  // large m, larger tile: 40 KB per stage, 17% fewer bytes per flop
    // Widths between, for the wave count at 1-4 waves of tiles (DeepGEMM's choices on Suite 2
    // at m = 1024: n = 1536 in 16 tiles of 96, 7168 in 64 of 112, 4608 in 32 of 144;
    // bench/results/2026-11-26-h200-1ced834/deepgemm-suite2.md). Their tiles cross a 128-wide
    // weight-scale block at a place that depends on the tile (block mode: a run-time boundary).
    {2, 96, 6, "m128n96", false},
    {2, 112, 6, "m128n112", false},
    {2, 144, 5, "m128n144", false},
    // A 256-row tile in two waves (DeepGEMM's BLOCK_M = 256 on most Suite 2 shapes): 48 KB per
    // stage and 64 KB of output staging, so 3 stages fit.
    {2, 128, 3, "m256n128", false, 2},
    // The same tile with the epilogue copies: block mode at k <= 512 (docs/kernels/fp8_gemm.md,
    // v28: 5-11% faster there, its K loop 4-12% slower at long k).
    {2, 128, 3, "m256n128e", false, 2, true},
    // The one-consumer tiles with a second consumer warpgroup on the other K blocks (small m,
    // where one warpgroup's wait-and-promote per K block leaves the tensor core idle); the
    // partner's 64 x BN fp32 sums take shared memory; an even stage count (10 / 6: each
    // stage read by one of the two).
    {2, 64, 10, "m64n64p", false, 1, false, true},
    {2, 128, 6, "m64n128p", false, 1, false, true},
};
inline constexpr int kSm90Fp8ConfigCount = sizeof(kSm90Fp8Configs) / sizeof(kSm90Fp8Configs[0]);
inline constexpr int kSm90Fp8BlockK = 128;

struct Sm90Fp8Params {
  int m, n, k;
  int k_blocks;  // ceil(k / 128)
  int tiles_m, tiles_n, splits;
  // The walk (sm90_fp8_gemm.cuh): with stream-K, first the first `sk_tiles` tiles as one run
  // of sk_tiles * k_blocks K iterations cut evenly among the CTAs; then `units` whole-K or
  // split-K units (the tiles after those), CTA b taking units b, b + grid, ...
  int units;     // tiles_m * tiles_n * splits, or the whole-K tiles after the stream-K ones
  int sk_tiles;  // 0: no stream-K (then units covers every tile); > 0 needs splits == 1
  int* sk_counters;   // (sk_tiles, consumers) parts stored, zeroed before the launch
  float* sk_partial;  // (grid, 2, BM, BN) fp32 pieces of stream-K tiles (fragment order)
  // kScaled: sa (1) or (m), sw (1) or (n); kBlock: sw (ceil(n/128), k_blocks), sa via TMA.
  const float* sa;
  const float* sw;
  int sa_per_row, sw_per_row;
  // int8 (sm90_int8_gemm): activation zero points (m) or null, weight row sums (n).
  const int* za;
  const int* wsum;
  const void* bias;  // (n) in the out dtype, or null
  void* out;         // (m, n) f16 / bf16
  int out_bf16;
  // (block_m - A rows per TMA box) x 128: 0, or, for a single row tile (m < block_m), the box
  // rows past m rounded up to 8 that the short box leaves out. It sits in the padding after
  // out_bf16: at the end, 8 bytes more of parameters, it made ptxas spill 24-144 bytes in the
  // consumers of m128n192 and m256n128(e) (Suite-1 fp8_tensor 6% slower at M = 1024, H200).
  uint32_t a_short_bytes;
  float* partial;  // splits > 1: (splits, m, n) fp32 partial sums, summed by the reduce kernel
};

// The output staging boxes (sm90_fp8_gemm.cuh, epilogue): 64 rows x this many 16-bit columns,
// swizzled over their row of 2 x that many bytes (128 / 64 / 32-byte swizzle): the widest of
// 64 / 32 / 16 that divides BN.
inline constexpr int sm90_fp8_out_box_cols(int block_n) {
  return block_n % 64 == 0 ? 64 : block_n % 32 == 0 ? 32 : 16;
}

// Shared memory bytes of configuration `c` (tiles, activation-scale tiles, the output
// staging boxes, barriers, the slack that aligns the tiles to 1024 bytes). At most 227 KB.
inline constexpr int sm90_fp8_smem_bytes(const Sm90Fp8Config& c) {
  return c.stages * (c.block_m() + c.block_n) * kSm90Fp8BlockK + c.stages * c.block_m() * 4 +
         c.block_m() * c.block_n * 2 + (c.k_pair ? 64 * c.block_n * 4 : 0) + c.stages * 16 + 1024;
}

// sm90_fp8_gemm_kernels.cu. prepare(): raise the kernel's dynamic shared-memory limit on the
// current device (host, once per device). launch(): one persistent launch of `grid` CTAs.
// reduce(): out = sum over splits of partial (+ bias), after a split launch.
Status sm90_fp8_gemm_prepare(int config, bool block_scaled);
// `out`: the output (m, n) as 16-bit elements in boxes of 64 x 64 with the 128-byte swizzle.
// `pdl`: as a programmatic dependent launch (the first stages' weight tiles before
// griddepcontrol.wait; not with stream-K, whose counters a memset zeroes just before).
Status sm90_fp8_gemm_launch(int config, bool block_scaled, const CUtensorMap& a, const CUtensorMap& w,
                            const CUtensorMap& sa, const CUtensorMap& out, const Sm90Fp8Params& p, int grid,
                            bool pdl, cudaStream_t stream);
// The split-K sum (p.splits > 1), after the GEMM kernel on the same stream. `pdl`: launched as
// a programmatic dependent of that kernel (which lets dependents launch at its start), so that
// its launch overlaps the GEMM; the kernel waits (griddepcontrol.wait) for the GEMM's completion
// before reading the partial sums, and lets its own dependents launch at once.
Status sm90_fp8_gemm_reduce(const Sm90Fp8Params& p, bool pdl, cudaStream_t stream);

}  // namespace lowbit::cuda
