// Internal: what the host side of sm90_mixed_gemm passes to its kernels, and the table of
// compiled tile configurations. Host and device code include it (no device code here but the
// stream-K tail's integer formulas, LOWBIT_HD).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"
#include "lowbit/dtype.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

// A CTA tile is 128 output channels (two consumer warpgroups of 64: one wgmma m64 each, the
// dequantized weights as the register A operand) x `block_tokens` tokens (the wgmma N), and
// walks k in blocks of 64 columns (one 128-byte row of 16-bit activations = the 128-byte TMA
// swizzle span; one 4-bit chunk, two 8-bit chunks of the tiled layout).
struct Sm90MixedConfig {
  int block_tokens;
  int stages;
  const char* tag;
  int block_k = 64;  // columns per stage: 64, or 128 (two 64-column sub-blocks, one barrier round trip)
};
inline constexpr Sm90MixedConfig kSm90MixedConfigs[] = {
    {64, 10, "c128t64"},   // moderate m with short k (else c128t64k128), 16 KB stages (8-bit)
    {128, 7, "c128t128"},  // the middle: 24 KB stages (8-bit)
    {256, 5, "c128t256"},  // large m: the fewest activation bytes per flop, 128 accumulators
    {64, 6, "c128t64k128", 128},  // m <= 64 (v17): 128-column stages, half the stage synchronizations
    {128, 4, "c128t128k128", 128},  // m = 65..256 (v18): the 128-token tile in 128-column stages
};
inline constexpr int kSm90MixedConfigCount = sizeof(kSm90MixedConfigs) / sizeof(kSm90MixedConfigs[0]);
inline constexpr int kSm90MixedBlockK = 64;  // the k block of the tiled layout and of a sub-block
inline constexpr int kSm90MixedBlockCh = 128;
// Per stage, the stage's scale and zero rows of the channel tile (up to one group per 32
// columns: block_k / 32 rows of 128 x 2 bytes of scales and of 128 bytes of zero points),
// loaded by the TMA with the tiles.
inline constexpr int sm90_mixed_sz_bytes(int block_k) { return block_k / 32 * (256 + 128); }
// Stages (k blocks of block_k columns) of a k extent; the last one may be half outside k (the
// TMA fills zeros there: zero activations, zero scales).
inline constexpr int64_t sm90_mixed_k_blocks(const Sm90MixedConfig& c, int64_t k) {
  return (k + c.block_k - 1) / c.block_k;
}

struct Sm90MixedParams {
  const void* scales;     // (groups, n) in the activation dtype, the tiled layout's pair order
  const uint8_t* zeros;   // (groups, n) u8, pair order; null: symmetric (z = 2^(bits-1))
  const void* bias;       // (n) or null
  void* out;              // (m, n) row-major, the activation dtype
  float* partial;         // splits > 1: (splits, m, n) fp32, unscaled per-channel, no bias;
                          // stream-K: (planes, m, n - sk_tile0 x 128) for the tail's columns
  int m, n, k;
  int k_blocks;           // sm90_mixed_k_blocks(): ceil(k / block_k)
  int group_size;         // 32, 64, 128; 0 = per-channel (applied in fp32 after the k loop)
  int group_shift;        // sm90_mixed_group_shift(group_size): the producer's group row is a shift
  int tiles_t, tiles_c;   // token tiles (ceil(m / block_tokens)), channel tiles (ceil(n / 128))
  int splits;
  int sz_rows;            // scale / zero rows per stage: block_k / group_size, at least 1
  int units;              // tiles_t * tiles_c * splits, walked by the persistent CTAs
  int pre_stages;         // stages whose constants are requested before griddepcontrol.wait (plan), 0 = every stage
  int x_last_rows;        // activation rows per TMA box of the last token tile (sm90_mixed_x_last_rows())
  // Stream-K tail (sk_tiles > 0; one token tile, splits = 1): after its whole units the CTA
  // takes its share of the last sk_tiles channel tiles' (tile, k block) iterations
  // (sm90_mixed_sk_share()); a piece's fp32 partial goes to plane sm90_mixed_sk_piece() of
  // `partial`, which the reduce kernel sums in plane order.
  int sk_tile0, sk_tiles;
  int part_ld, part_col0;  // partial (plane, row, col) at (plane m + row) part_ld + col - part_col0
  // Act-order weights (both null otherwise): the packed weight's index {k', groups', ...}, whose
  // k' replaces k for the k blocks (k_blocks above is ceil(k / block_k) then, a placeholder), and
  // the five tensor maps (x, x_last, w, s, z) re-extented to k' and groups' on the device by
  // sm90_mixed_gemm_act_order_maps() (global memory; the kernel acquires them, tensormap.cuh).
  const int32_t* act_index;
  const CUtensorMap* act_maps;
};

// Configurations that may take a stream-K tail: token tiles of at most 128 (see the kernel's
// epilogue).
inline constexpr bool sm90_mixed_tail_config(const Sm90MixedConfig& c) { return c.block_tokens <= 128; }

// Stream-K tail of S = sk_tiles x k_blocks iterations over G CTAs (G <= S): CTA c takes
// [floor(c S / G), floor((c + 1) S / G)), never empty. Host (workspace, tests) and device
// (kernel walk, reduce) use these same integer formulas.
// The first CTA whose share contains iteration x: the largest c with floor(c S / G) <= x, i.e.
// c S < (x + 1) G.
LOWBIT_HD int64_t sm90_mixed_sk_cta_of(int64_t x, int64_t S, int64_t G) {
  return ((x + 1) * G + S - 1) / S - 1;
}
// Pieces (planes) of tail tile j: the CTAs whose shares meet its k_blocks iterations.
LOWBIT_HD int sm90_mixed_sk_pieces(int64_t j, int64_t k_blocks, int64_t S, int64_t G) {
  return static_cast<int>(sm90_mixed_sk_cta_of((j + 1) * k_blocks - 1, S, G) - sm90_mixed_sk_cta_of(j * k_blocks, S, G) + 1);
}

// log2 of a group size the tiled layout takes (32, 64, 128), 0 for per-channel (0): the
// producer finds the group row of k block kb as (64 kb) >> shift, not by a division (v14).
inline constexpr int sm90_mixed_group_shift(int group_size) {
  return group_size == 32 ? 5 : group_size == 64 ? 6 : group_size == 128 ? 7 : 0;
}
inline constexpr bool sm90_mixed_group_shift_matches_division() {
  for (int gs : {32, 64, 128})
    for (int kb = 0; kb < (1 << 12); ++kb)
      if (((kb * kSm90MixedBlockK) >> sm90_mixed_group_shift(gs)) != (kb * kSm90MixedBlockK) / gs) return false;
  return true;
}
static_assert(sm90_mixed_group_shift_matches_division(), "the group row shift must equal the division");

// Whether the consumers decode each 64 columns as two halves of two k16 steps (each its own
// wgmma group) instead of one group of four: where two whole-block A buffers do not fit the
// registers (ptxas would serialize the wgmmas, C7512): the 256-token tile (128 accumulators),
// and bf16 x 8-bit from 128 tokens (its decode through f32 needs more temporaries).
inline constexpr bool sm90_mixed_halves(int block_tokens, bool bf16, int bits) {
  return block_tokens == 256 || (bf16 && bits == 8 && block_tokens >= 128);
}
// Whether configuration c has a kernel for (activation dtype, bits). Not built: 128-column
// stages decoded by halves, i.e. c128t128k128 for bf16 x 8-bit. It ran 4-6% slower than
// c128t128 on every Suite-1 layer at m = 96..256 (sm90 v18, so the plan never took it), and
// ptxas serialized its wgmmas (C7513: non-wgmma instructions define wgmma input registers
// inside the pipeline stage). The family refuses such a plan by name.
inline constexpr bool sm90_mixed_has_kernel(const Sm90MixedConfig& c, bool bf16, int bits) {
  return !(c.block_k > kSm90MixedBlockK && sm90_mixed_halves(c.block_tokens, bf16, bits));
}
// Whether one TMA box holds a stage's weight tile (at most 256 u32 per row): every 64-column
// stage, 4-bit 128-column stages; 8-bit 128-column stages take two boxes of 64 columns.
inline constexpr bool sm90_mixed_w_one_box(int block_k, int bits) { return block_k / 64 * 32 * bits <= 256; }
// Bytes of one stage: the activation tile (block_k / 64 sub-tiles of block_tokens rows of 128
// bytes) and the weight tile (8 strips x block_k columns x bits).
inline constexpr int sm90_mixed_stage_bytes(const Sm90MixedConfig& c, int bits) {
  return c.block_tokens * 128 * (c.block_k / 64) + kSm90MixedBlockCh * c.block_k * bits / 8;
}
// Shared memory of configuration c: stages, their full / empty barriers, 1024 bytes of slack
// that align the tiles for the 128-byte swizzle. At most 227 KB.
inline constexpr int sm90_mixed_smem_bytes(const Sm90MixedConfig& c, int bits) {
  return c.stages * (sm90_mixed_stage_bytes(c, bits) + sm90_mixed_sz_bytes(c.block_k)) + c.stages * 16 + 1024;
}

// The kernels of one (activation dtype, bits) pair (sm90_mixed_gemm_{f16,bf16}_w{4,8}.cu).
// prepare(): raise the kernel's dynamic shared-memory limit on the current device.
// launch(): one persistent launch of `grid` CTAs of 384 threads. The maps: x = the activations
// (m rows, k columns, 16-bit), boxes of (block_tokens rows, 64 columns), 128-byte swizzle;
// w = the tiled weights as (n / 16 strips, 8 k bits u32 per strip), boxes of (8 strips,
// 32 bits u32), no swizzle; s = the scales (groups rows, n columns, 16-bit), boxes of (sz_rows,
// 128); z = the zero points (groups, n, u8), boxes of (sz_rows, 128), unused when symmetric.
struct Sm90MixedKernels {
  Status (*prepare)(int config);
  // `pdl`: as a programmatic dependent launch (the first stages' weights, scales and zero
  // points before griddepcontrol.wait).
  // x: activation boxes of block_tokens rows; x_last: those of the last token tile (its rows).
  Status (*launch)(int config, const CUtensorMap& x, const CUtensorMap& x_last, const CUtensorMap& w,
                   const CUtensorMap& s, const CUtensorMap& z, const Sm90MixedParams& p, int grid, bool pdl,
                   cudaStream_t stream);
};
// The stream-K tail's sum (sm90_mixed_gemm_reduce.cu): out[:, col0:n] = each tail tile's
// pieces (planes of `partials`, rows of n - col0) added in plane order, times the per-channel
// scales (null: grouped weights, scaled in the GEMM), plus the bias. `iters`, `grid`: the tail's
// S and G (sm90_mixed_sk_pieces()).
Status sm90_mixed_gemm_reduce_sk(DType t, const float* partials, int m, int n, int col0, int k_blocks,
                                 int64_t iters, int grid, const void* channel_scales, const void* bias, void* out,
                                 Stream stream);

// Act-order weights (sm90_mixed_gemm_act_order.cu): copies the first `maps` of the tensor maps
// (x, x_last, w, s, z) the host encoded with k as a placeholder to `out` (global memory, 64-byte
// aligned), re-extented to the index's k' and groups', for the GEMM launched next on `stream`
// (Sm90MixedParams::act_maps). `pdl`: a programmatic dependent launch that waits for the previous
// kernel of the stream before writing (ActGatherPlan::pdl).
inline constexpr int kSm90MixedActOrderMaps = 5;
Status sm90_mixed_gemm_act_order_maps(const CUtensorMap* tmpl, int maps, const int32_t* index, int bits,
                                      CUtensorMap* out, bool pdl, cudaStream_t stream);

const Sm90MixedKernels& sm90_mixed_gemm_kernels_f16_w4();
const Sm90MixedKernels& sm90_mixed_gemm_kernels_f16_w8();
const Sm90MixedKernels& sm90_mixed_gemm_kernels_bf16_w4();
const Sm90MixedKernels& sm90_mixed_gemm_kernels_bf16_w8();

}  // namespace lowbit::cuda
