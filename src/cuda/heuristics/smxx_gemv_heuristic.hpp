// Internal: the GEMV family's instantiated kernels and its launch-configuration choice,
// kept apart from the kernels (CONVENTIONS.md). Host code; no CUDA headers.
//
// What is compile-time and why (everything else is a run-time argument of one kernel):
//   * weight width: the bit layout and the decode (a different instruction sequence);
//   * activation kind (f16 / bf16 / int8): the mma instruction and the magic numbers;
//   * scale slots per 256-column chunk (group 32, 64, 128, per-channel): the length of the
//     mma chain between two scale applications and which lane holds which scale entry;
//   * the packed layout (the gemv layout or the mixed GEMMs' tiled layout): addressing,
//     bit placement and the order of the activations in the B operand.
// (The ring depth follows the width: ring_depth(), smxx_gemv_params.hpp.)
// Run time: m (1..8, the mma's n), zero-point mode (symmetric / integer / float), scale
// dtype (f16 / bf16), output dtype, bias, n, k, warps, correction table or per item, grid.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/gemv/smxx_gemv_bitserial_params.hpp"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/heuristics/gpu_spec.hpp"

namespace lowbit::gemv {

struct GemvKernelRow {
  int bits;
  int act;    // GemvAct
  int slots;  // 8: group 32, 4: group 64, 2: group 128, 1: per-channel
  const char* reason;
  int layout = kLayoutGemv;  // GemvLayout: which packed layout the kernel reads
  int stage_x = 0;           // tiled: activations through shared memory (m > kTiledDirectMaxM)
  int cluster = 0;           // tiled, staged: launched as clusters splitting k (sm_90; GemvLaunch::ksplit > 1)
  int act_order = 0;         // tiled, staged, grouped: act-order weights (the staging places x[:, perm]); 2: gathered in rounds
};

// Tiled layout: the largest m whose kernels read the activations straight from global memory
// (32-bit pairs); above it they are staged in shared memory and read with ldmatrix. Measured
// on H200 (docs/kernels/gemv.md, "Reading the tiled layout"): direct 53.3 / 58.4 us at m = 1 / 2
// (w4 g128 f16 Suite 1) against staged 58.6 / 61.4; staged 92.8 at m = 8 against direct 126.2.
inline constexpr int kTiledDirectMaxM = 2;
// Tiles per SM up to which a launch runs one block of 16 warps per SM at every m
// (choose_gemv_launch, measurements there).
inline constexpr int kGemvFewTilesPerSm = 4;
constexpr bool gemv_stages_x(int layout, int m) { return layout == kLayoutTiled && m > kTiledDirectMaxM; }

// The instantiated kernels, one row each. Each width x {f16, bf16} x 4 group classes is
// claimed by the issue (every width, group and dtype must run); int8 activations only for
// 4- and 8-bit weights (the scope, and the only widths whose codes are whole
// nibbles / bytes of the int8 mma operand); then 4- and 8-bit f16 / bf16 kernels reading
// the tiled layout, each with the activations read directly (m <= kTiledDirectMaxM) or staged.
// 112 kernels (the last 16 the staged ones as clusters), then 36 for act-order weights;
// smxx_gemv_w<bits>.cu and smxx_gemv_w<bits>_act.cu instantiate exactly these rows.
inline constexpr GemvKernelRow kGemvKernels[] = {
    // 1-bit: binary weights (extreme-compression research models).
    {1, kActF16, 8, "w1 g32 f16"},   {1, kActF16, 4, "w1 g64 f16"},
    {1, kActF16, 2, "w1 g128 f16 (Suite 1)"}, {1, kActF16, 1, "w1 per-channel f16"},
    {1, kActBf16, 8, "w1 g32 bf16"}, {1, kActBf16, 4, "w1 g64 bf16"},
    {1, kActBf16, 2, "w1 g128 bf16"}, {1, kActBf16, 1, "w1 per-channel bf16"},
    // 2-bit: HQQ / GemLite 2-bit models.
    {2, kActF16, 8, "w2 g32 f16"},   {2, kActF16, 4, "w2 g64 f16 (HQQ default)"},
    {2, kActF16, 2, "w2 g128 f16 (Suite 1)"}, {2, kActF16, 1, "w2 per-channel f16"},
    {2, kActBf16, 8, "w2 g32 bf16"}, {2, kActBf16, 4, "w2 g64 bf16"},
    {2, kActBf16, 2, "w2 g128 bf16"}, {2, kActBf16, 1, "w2 per-channel bf16"},
    // 3-bit: the odd width GemLite cannot pack.
    {3, kActF16, 8, "w3 g32 f16"},   {3, kActF16, 4, "w3 g64 f16"},
    {3, kActF16, 2, "w3 g128 f16 (Suite 1)"}, {3, kActF16, 1, "w3 per-channel f16"},
    {3, kActBf16, 8, "w3 g32 bf16"}, {3, kActBf16, 4, "w3 g64 bf16"},
    {3, kActBf16, 2, "w3 g128 bf16"}, {3, kActBf16, 1, "w3 per-channel bf16"},
    // 4-bit: GPTQ / AWQ / HQQ; float zero points and whatever the tiled layout is slower for.
    {4, kActF16, 8, "w4 g32 f16"},   {4, kActF16, 4, "w4 g64 f16 (HQQ)"},
    {4, kActF16, 2, "w4 g128 f16 (Suite 1, GPTQ/AWQ default)"}, {4, kActF16, 1, "w4 per-channel f16"},
    {4, kActBf16, 8, "w4 g32 bf16"}, {4, kActBf16, 4, "w4 g64 bf16"},
    {4, kActBf16, 2, "w4 g128 bf16"}, {4, kActBf16, 1, "w4 per-channel bf16"},
    // 5-bit, 6-bit: odd widths between 4 and 8 (HQQ, mixed-precision recipes).
    {5, kActF16, 8, "w5 g32 f16"},   {5, kActF16, 4, "w5 g64 f16"},
    {5, kActF16, 2, "w5 g128 f16 (Suite 1)"}, {5, kActF16, 1, "w5 per-channel f16"},
    {5, kActBf16, 8, "w5 g32 bf16"}, {5, kActBf16, 4, "w5 g64 bf16"},
    {5, kActBf16, 2, "w5 g128 bf16"}, {5, kActBf16, 1, "w5 per-channel bf16"},
    {6, kActF16, 8, "w6 g32 f16"},   {6, kActF16, 4, "w6 g64 f16"},
    {6, kActF16, 2, "w6 g128 f16 (Suite 1)"}, {6, kActF16, 1, "w6 per-channel f16"},
    {6, kActBf16, 8, "w6 g32 bf16"}, {6, kActBf16, 4, "w6 g64 bf16"},
    {6, kActBf16, 2, "w6 g128 bf16"}, {6, kActBf16, 1, "w6 per-channel bf16"},
    // 8-bit: int8 weight-only models; float zero points.
    {8, kActF16, 8, "w8 g32 f16"},   {8, kActF16, 4, "w8 g64 f16"},
    {8, kActF16, 2, "w8 g128 f16 (Suite 1)"}, {8, kActF16, 1, "w8 per-channel f16 (W8A16)"},
    {8, kActBf16, 8, "w8 g32 bf16"}, {8, kActBf16, 4, "w8 g64 bf16"},
    {8, kActBf16, 2, "w8 g128 bf16"}, {8, kActBf16, 1, "w8 per-channel bf16"},
    // int8 activations (per-token scale) with 4- and 8-bit weights.
    {4, kActI8, 8, "w4a8 g32"}, {4, kActI8, 4, "w4a8 g64"},
    {4, kActI8, 2, "w4a8 g128 (Suite 1 int8 row)"}, {4, kActI8, 1, "w4a8 per-channel"},
    {8, kActI8, 8, "w8a8 g32"}, {8, kActI8, 4, "w8a8 g64"},
    {8, kActI8, 2, "w8a8 g128"}, {8, kActI8, 1, "w8a8 per-channel (W8A8 weight-only layout)"},
    // The tiled layout (the mixed GEMMs' tiled_w4_v1 / tiled_w8_v1) read in place, so that
    // GPTQ / AWQ weights packed once run on this kernel at decode m and on a mixed GEMM
    // above it (docs/kernels/gemv.md, "Reading the tiled layout"). f16 / bf16 activations.
    {4, kActF16, 8, "tiled w4 g32 f16", kLayoutTiled},  {4, kActF16, 4, "tiled w4 g64 f16", kLayoutTiled},
    {4, kActF16, 2, "tiled w4 g128 f16 (Suite 1, GPTQ/AWQ)", kLayoutTiled},
    {4, kActF16, 1, "tiled w4 per-channel f16", kLayoutTiled},
    {4, kActBf16, 8, "tiled w4 g32 bf16", kLayoutTiled}, {4, kActBf16, 4, "tiled w4 g64 bf16", kLayoutTiled},
    {4, kActBf16, 2, "tiled w4 g128 bf16", kLayoutTiled}, {4, kActBf16, 1, "tiled w4 per-channel bf16", kLayoutTiled},
    {8, kActF16, 8, "tiled w8 g32 f16", kLayoutTiled},  {8, kActF16, 4, "tiled w8 g64 f16", kLayoutTiled},
    {8, kActF16, 2, "tiled w8 g128 f16", kLayoutTiled},
    {8, kActF16, 1, "tiled w8 per-channel f16 (Suite 1 W8)", kLayoutTiled},
    {8, kActBf16, 8, "tiled w8 g32 bf16", kLayoutTiled}, {8, kActBf16, 4, "tiled w8 g64 bf16", kLayoutTiled},
    {8, kActBf16, 2, "tiled w8 g128 bf16", kLayoutTiled}, {8, kActBf16, 1, "tiled w8 per-channel bf16", kLayoutTiled},
    // The same with the activations staged in shared memory (m > kTiledDirectMaxM).
    {4, kActF16, 8, "tiled w4 g32 f16, staged x", kLayoutTiled, 1},  {4, kActF16, 4, "tiled w4 g64 f16, staged x", kLayoutTiled, 1},
    {4, kActF16, 2, "tiled w4 g128 f16 (Suite 1, GPTQ/AWQ), staged x", kLayoutTiled, 1},
    {4, kActF16, 1, "tiled w4 per-channel f16, staged x", kLayoutTiled, 1},
    {4, kActBf16, 8, "tiled w4 g32 bf16, staged x", kLayoutTiled, 1}, {4, kActBf16, 4, "tiled w4 g64 bf16, staged x", kLayoutTiled, 1},
    {4, kActBf16, 2, "tiled w4 g128 bf16, staged x", kLayoutTiled, 1}, {4, kActBf16, 1, "tiled w4 per-channel bf16, staged x", kLayoutTiled, 1},
    {8, kActF16, 8, "tiled w8 g32 f16, staged x", kLayoutTiled, 1},  {8, kActF16, 4, "tiled w8 g64 f16, staged x", kLayoutTiled, 1},
    {8, kActF16, 2, "tiled w8 g128 f16, staged x", kLayoutTiled, 1},
    {8, kActF16, 1, "tiled w8 per-channel f16 (Suite 1 W8), staged x", kLayoutTiled, 1},
    {8, kActBf16, 8, "tiled w8 g32 bf16, staged x", kLayoutTiled, 1}, {8, kActBf16, 4, "tiled w8 g64 bf16, staged x", kLayoutTiled, 1},
    {8, kActBf16, 2, "tiled w8 g128 bf16, staged x", kLayoutTiled, 1}, {8, kActBf16, 1, "tiled w8 per-channel bf16, staged x", kLayoutTiled, 1},
    // The staged kernels again, launched as clusters of blocks splitting k (sm_90; long k at
    // larger m, where one block cannot stage its activations once: choose_gemv_launch).
    {4, kActF16, 8, "tiled w4 g32 f16, staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActF16, 4, "tiled w4 g64 f16, staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActF16, 2, "tiled w4 g128 f16 (Suite 1 down, m >= 5), staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActF16, 1, "tiled w4 per-channel f16, staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActBf16, 8, "tiled w4 g32 bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActBf16, 4, "tiled w4 g64 bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActBf16, 2, "tiled w4 g128 bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {4, kActBf16, 1, "tiled w4 per-channel bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActF16, 8, "tiled w8 g32 f16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActF16, 4, "tiled w8 g64 f16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActF16, 2, "tiled w8 g128 f16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActF16, 1, "tiled w8 per-channel f16 (Suite 1 W8 down, m >= 3), staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActBf16, 8, "tiled w8 g32 bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActBf16, 4, "tiled w8 g64 bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActBf16, 2, "tiled w8 g128 bf16, staged x, cluster", kLayoutTiled, 1, 1},
    {8, kActBf16, 1, "tiled w8 per-channel bf16, staged x, cluster", kLayoutTiled, 1, 1},
    // Act-order weights (GPTQ desc_act; a group size is required, so no per-channel rows): the
    // staged kernels with the activations placed by the weight's permutation (smxx_gemv.cuh,
    // kPermuted), without and with the cluster split. Separate instantiations so that the plain
    // kernels' code is what it was (a run-time flag in every staged kernel cost the plain Suite-1
    // sum ~0.6 us at m = 1, session 67), compiled in their own translation units
    // (smxx_gemv_w<bits>_act.cu).
    {4, kActF16, 8, "tiled w4 g32 f16, act-order", kLayoutTiled, 1, 0, 1},
    {4, kActF16, 4, "tiled w4 g64 f16, act-order", kLayoutTiled, 1, 0, 1},
    {4, kActF16, 2, "tiled w4 g128 f16, act-order (GPTQ desc_act)", kLayoutTiled, 1, 0, 1},
    {4, kActBf16, 8, "tiled w4 g32 bf16, act-order", kLayoutTiled, 1, 0, 1},
    {4, kActBf16, 4, "tiled w4 g64 bf16, act-order", kLayoutTiled, 1, 0, 1},
    {4, kActBf16, 2, "tiled w4 g128 bf16, act-order", kLayoutTiled, 1, 0, 1},
    {8, kActF16, 8, "tiled w8 g32 f16, act-order", kLayoutTiled, 1, 0, 1},
    {8, kActF16, 4, "tiled w8 g64 f16, act-order", kLayoutTiled, 1, 0, 1},
    {8, kActF16, 2, "tiled w8 g128 f16, act-order", kLayoutTiled, 1, 0, 1},
    {8, kActBf16, 8, "tiled w8 g32 bf16, act-order", kLayoutTiled, 1, 0, 1},
    {8, kActBf16, 4, "tiled w8 g64 bf16, act-order", kLayoutTiled, 1, 0, 1},
    {8, kActBf16, 2, "tiled w8 g128 bf16, act-order", kLayoutTiled, 1, 0, 1},
    {4, kActF16, 8, "tiled w4 g32 f16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {4, kActF16, 4, "tiled w4 g64 f16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {4, kActF16, 2, "tiled w4 g128 f16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {4, kActBf16, 8, "tiled w4 g32 bf16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {4, kActBf16, 4, "tiled w4 g64 bf16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {4, kActBf16, 2, "tiled w4 g128 bf16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {8, kActF16, 8, "tiled w8 g32 f16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {8, kActF16, 4, "tiled w8 g64 f16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {8, kActF16, 2, "tiled w8 g128 f16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {8, kActBf16, 8, "tiled w8 g32 bf16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {8, kActBf16, 4, "tiled w8 g64 bf16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    {8, kActBf16, 2, "tiled w8 g128 bf16, act-order, cluster", kLayoutTiled, 1, 1, 1},
    // Act-order, 4-bit, the lanes' gather in rounds of kActGatherRoundRows rows (kRounds; where
    // the copy of every row would change the launch, choose_gemv_launch), without and with the
    // cluster split. Their own rows so that the other act-order kernels keep their code (with
    // the rounds as a run-time path beside the others, session 68: 0.3-0.5 us slower per call at
    // m = 1, and stack in 10 of 12 kernels).
    {4, kActF16, 8, "tiled w4 g32 f16, act-order, gather in rounds", kLayoutTiled, 1, 0, 2},
    {4, kActF16, 4, "tiled w4 g64 f16, act-order, gather in rounds", kLayoutTiled, 1, 0, 2},
    {4, kActF16, 2, "tiled w4 g128 f16, act-order, gather in rounds", kLayoutTiled, 1, 0, 2},
    {4, kActBf16, 8, "tiled w4 g32 bf16, act-order, gather in rounds", kLayoutTiled, 1, 0, 2},
    {4, kActBf16, 4, "tiled w4 g64 bf16, act-order, gather in rounds", kLayoutTiled, 1, 0, 2},
    {4, kActBf16, 2, "tiled w4 g128 bf16, act-order, gather in rounds", kLayoutTiled, 1, 0, 2},
    {4, kActF16, 8, "tiled w4 g32 f16, act-order, gather in rounds, cluster", kLayoutTiled, 1, 1, 2},
    {4, kActF16, 4, "tiled w4 g64 f16, act-order, gather in rounds, cluster", kLayoutTiled, 1, 1, 2},
    {4, kActF16, 2, "tiled w4 g128 f16, act-order, gather in rounds, cluster", kLayoutTiled, 1, 1, 2},
    {4, kActBf16, 8, "tiled w4 g32 bf16, act-order, gather in rounds, cluster", kLayoutTiled, 1, 1, 2},
    {4, kActBf16, 4, "tiled w4 g64 bf16, act-order, gather in rounds, cluster", kLayoutTiled, 1, 1, 2},
    {4, kActBf16, 2, "tiled w4 g128 bf16, act-order, gather in rounds, cluster", kLayoutTiled, 1, 1, 2},
};
inline constexpr int kGemvKernelCount = static_cast<int>(sizeof(kGemvKernels) / sizeof(kGemvKernels[0]));

// Index of the row for (bits, act, slots, layout, stage_x, cluster, act_order), or -1.
constexpr int find_gemv_kernel(int bits, int act, int slots, int layout = kLayoutGemv, int stage_x = 0,
                               int cluster = 0, int act_order = 0) {
  for (int i = 0; i < kGemvKernelCount; ++i)
    if (kGemvKernels[i].bits == bits && kGemvKernels[i].act == act && kGemvKernels[i].slots == slots &&
        kGemvKernels[i].layout == layout && kGemvKernels[i].stage_x == stage_x && kGemvKernels[i].cluster == cluster &&
        kGemvKernels[i].act_order == act_order)
      return i;
  return -1;
}

// The problem as the launch choice sees it.
struct GemvShape {
  int bits = 4;
  int layout = kLayoutGemv;
  int act = kActF16;
  int slots = 2;       // scale slots per chunk (256 / group, 1 per-channel)
  bool zeros = false;  // zero points stored
  int m = 1;
  int64_t n = 0;
  int64_t k = 0;
  bool clusters = false;  // the GPU and the build launch thread-block clusters (sm_90)
  bool act_order = false; // tiled, act-order: the block also holds a table of the packed columns' places (k int32)
};

// How a tiled-layout kernel reads the activations (B operand): straight from global memory
// (32-bit pairs), staged in the warp's shared buffer per item, or the warp's chunks staged
// once per call. The last two run the staged kernels (stage_x = 1).
enum GemvXMode : int { kGemvXDirect = 0, kGemvXPerItem = 1, kGemvXOnce = 2 };

// Tiles whose partial sums a block collects between two barriers (at most; fewer when the
// block's share of the SM's shared memory would not hold them).
inline constexpr int kGemvPhaseTiles = 4;

// A launch: everything of GemvParams that is not an operand, plus the grid.
struct GemvLaunch {
  int warps = kMaxWarps;       // block = 32 * warps threads = the block's k-split (<= chunks)
  int depth = 2;               // ring slots per warp (ring_depth(bits): compile-time)
  int slot_bytes = 0;          // ring_slot_bytes()
  int blocks_per_sm = 1;       // blocks of one call per SM (1 leaves room for the next call's)
  int grid = 0;                // filled by finish_gemv_launch()
  bool corr_table = true;      // corrections in a per-warp table (else recomputed per item)
  int corr_offset = 0;         // bytes: the per-warp correction tables
  int corr_stride = 0;         // bytes of one warp's table
  int part_offset = 0;         // bytes: partial sums
  int phase_tiles = 1;         // tiles whose partial sums meet at one block barrier
  int xbuf_offset = 0;         // bytes: tiled layout, per-warp activation buffers
  int xbuf_stride = 0;         // bytes of one warp's activation buffer
  int place_offset = 0;        // bytes: act-order, the block's copy of the rows or table of places (x_mode kGemvXOnce only)
  int act_gather = 0;          // act-order: the lanes gather from the block's copy of the rows (else the table's scatter)
  int act_rounds = 0;          // act-order: 1 = that gather in rounds of kActGatherRoundRows rows (the kRounds kernels)
  int x_mode = 0;              // GemvXMode: how the tiled kernels read the activations
  int ksplit = 1;              // blocks of a cluster splitting k (1: no cluster)
  bool tile_interleave = true; // block (cluster) b of G owns tiles b, b + G, ... (else a contiguous range)
  bool scale_prefetch = false; // tiled, grouped: the scale (zero) rows prefetched into L2 after the wait
  std::size_t smem_bytes = 0;  // dynamic shared memory of the launch
  int resident_blocks = 0;     // blocks of this kernel an SM holds at smem_bytes (runtime); held <= blocks_per_sm without clusters
};

// Warps, ring and shared memory for a shape on a GPU (grid not yet known: it needs the
// kernel's occupancy, which the family's host side asks the runtime for).
// Tuning overrides (tests, the device script): LOWBIT_GEMV_LAUNCH=
// "warps[,blocks_per_sm[,corr_table]]" (-1 keeps the choice); LOWBIT_GEMV_KSPLIT=<1|2|4>
// (clusters of blocks splitting k, sm_90, tiled layout with staged activations: 1 never, 2 / 4
// forced wherever the cluster has a chunk per warp); LOWBIT_GEMV_INTERLEAVE=<0|1> (the tiles
// of a block interleaved with the other blocks' or a contiguous range); LOWBIT_GEMV_SCALE_PREFETCH=<0|1>
// (the tiled layout's grouped scale and zero rows prefetched into L2 after the wait, or not).
// The tiled layout's grouped scale rows are prefetched into L2 (GemvLaunch::scale_prefetch)
// only on GPUs below this theoretical DRAM rate (GpuSpec::dram_gbps): measured faster on H100
// (3352 GB/s), slower on H200 (4814; docs/kernels/gemv.md v20, v21).
inline constexpr double kGemvScalePrefetchMaxDramGbps = 3800.0;

GemvLaunch choose_gemv_launch(const GemvShape& s, const cuda::GpuSpec& gpu);

// The grid: min(tiles, SMs x blocks_per_sm) blocks (capped by what is resident), each with a
// balanced share of the tiles; with ksplit > 1, ksplit x min(tiles, max_clusters) blocks
// (max_clusters: the clusters the runtime can keep resident at once). LOWBIT_GEMV_GRID=<blocks>
// overrides it (rounded down to whole clusters).
void finish_gemv_launch(GemvLaunch& l, int64_t tiles, int blocks_per_sm, const cuda::GpuSpec& gpu,
                        int max_clusters = 0);

// The bit-serial kernel (smxx_gemv_bitserial.cuh): 1- and 2-bit weights of the gemv layout,
// f16 / bf16 activations, any group and zero-point mode, m = 1, on the single-bit mma with no
// weight decode. Whether it runs instead of the decoding kernel is a measured rule
// (docs/kernels/gemv.md, "Bit-serial"); LOWBIT_GEMV_BITSERIAL=0 never takes it, =1 wherever it
// applies (a measurement knob).
bool gemv_bitserial_applies(const GemvShape& s);
bool gemv_bitserial_chosen(const GemvShape& s);

struct BitserialLaunch {
  int warps = 8;          // the block's k-split (<= chunks)
  int grid = 0;           // blocks: min(tiles, SMs x resident blocks)
  bool tile_interleave = true;  // block b of G owns tiles b, b + G, ... (else a contiguous range)
};
// Warps per block (LOWBIT_GEMV_BS_WARPS overrides), then the grid from the resident blocks
// per SM the runtime reports for that block.
int bitserial_warps(const GemvShape& s, const cuda::GpuSpec& gpu);
BitserialLaunch finish_bitserial_launch(const GemvShape& s, int warps, int blocks_per_sm, const cuda::GpuSpec& gpu);

}  // namespace lowbit::gemv
