// Internal: the arguments of the GEMV kernels (smxx_gemv.cuh), one struct passed by value
// as a __grid_constant__ parameter. Host and device; no CUDA headers needed.
#pragma once

#include <cstdint>

namespace lowbit::gemv {

inline constexpr int kMaxWarps = 8;  // warps per block (the k split inside a block)
inline constexpr int kMaxThreads = 32 * kMaxWarps;

// Tiles a warp processes per item at most (compile-time: they size register arrays). The
// narrow widths carry few bytes per tile, so two tiles share one set of activation
// fragments and the per-item overheads (docs/kernels/gemv.md, notes: measured best of
// 1 / 2 / 4 tiles per width in v2..v4). The macros exist for experiments only.
#ifndef LOWBIT_GEMV_TR_W1
#define LOWBIT_GEMV_TR_W1 2
#endif
#ifndef LOWBIT_GEMV_TR_W2
#define LOWBIT_GEMV_TR_W2 2
#endif
#ifndef LOWBIT_GEMV_TR_W3
#define LOWBIT_GEMV_TR_W3 2
#endif
constexpr int max_tiles_per_unit(int bits) {
  return bits == 1 ? LOWBIT_GEMV_TR_W1 : bits == 2 ? LOWBIT_GEMV_TR_W2 : bits == 3 ? LOWBIT_GEMV_TR_W3 : 1;
}
// Blocks per SM the register allocation must allow (__launch_bounds__): 2 (<= 128 registers,
// 16 warps per SM) unless that spills: the 2- and 3-bit kernels of groups 32 / 64 keep two
// tiles and several scale entries per buffer (ptxas -v: 8-12 bytes of spills at 128).
constexpr int min_blocks_per_sm(int bits, int slots) {
  return (bits == 2 || bits == 3) && slots >= 4 ? 1 : 2;
}
// Bytes of one ring slot of a warp: the item's weights (max tiles) and its scale and zero
// entries (16-byte pieces, slots * 32 bytes per tile each).
constexpr int ring_slot_bytes(int bits, int slots) {
  return max_tiles_per_unit(bits) * (bits * 512 + 2 * slots * 32);
}

// Activation kinds of the kernel instantiations (template argument kAct).
enum GemvAct : int {
  kActF16 = 0,
  kActBf16 = 1,
  kActI8 = 2,  // int8 per-token symmetric, mma.m16n8k32 u8 x s8
};

// Output dtypes (runtime).
enum GemvOut : int {
  kOutF16 = 0,
  kOutBf16 = 1,
  kOutF32 = 2,
};

struct GemvParams {
  const void* x = nullptr;          // activations (m, k) row-major: f16 / bf16 / int8; 16-byte aligned
  const float* x_scales = nullptr;  // int8: (m) per-token scales; else null
  const void* w = nullptr;          // packed weights, gemv layout (smxx_gemv_layout.hpp), 16-byte aligned
  const uint32_t* scales = nullptr; // packed scale entries (low half row g, high half row g+8)
  const uint32_t* zeros = nullptr;  // packed zero entries, same geometry; null when symmetric
  const void* bias = nullptr;       // (n) in the output dtype, or null
  void* y = nullptr;                // output (m, n) row-major, output dtype

  int m = 0;                 // 1..8
  int n = 0;
  int k = 0;                 // multiple of 32
  int tiles = 0;             // ceil(n / 16)
  int chunks = 0;            // ceil(k / 256)
  int tiles_per_unit = 1;    // tiles a warp processes together (<= the kernel's maximum)
  int units = 0;             // ceil(tiles / tiles_per_unit): row blocks, spread over the grid
  int chunks_per_warp = 1;   // the block's warps split the chunks in contiguous ranges
  int64_t scale_tile_stride = 0;  // entries between tiles (chunks * slots * 8, or 8 per-channel)
  int scale_chunk_stride = 0;     // entries between chunks (slots * 8, or 0 per-channel)
  int scale_bf16 = 0;        // scales / zeros stored as bf16 (else f16)
  int out_dtype = kOutF16;   // GemvOut
  int has_zeros = 0;         // zero points stored (integer or float)
  int has_bias = 0;
  int x_in_smem = 1;         // activations staged in shared memory (else read from L2)
  int x_smem_stride = 0;     // bytes between rows of the staged activations
  int corr_offset = 0;       // bytes: the correction table (chunks x slots x 64 bytes)
  int cx_offset = 0;         // bytes: the activation-sum table (zero points, int8), same size
  int part_offset = 0;       // bytes: start of the partial-sum buffers in shared memory
  int ring_offset = 0;       // bytes: the warps' item rings (warps x stages x ring_slot_bytes)
  int stages = 3;            // ring depth per warp: items in flight + 1 (2..7)
};

}  // namespace lowbit::gemv
