// Internal: the arguments of the GEMV kernels (smxx_gemv.cuh), one struct passed by value
// as a __grid_constant__ parameter. Host and device; no CUDA headers needed.
#pragma once

#include <cstdint>

namespace lowbit::gemv {

inline constexpr int kMaxWarps = 16;  // warps per block (each streams its own items)
inline constexpr int kMaxThreads = 32 * kMaxWarps;
inline constexpr int kMaxRing = 8;    // ring slots per warp (items in flight + 1)
inline constexpr int kRedBufs = 3;    // per-tile partial-sum buffers of a block (see the kernel)

// Bytes of one ring slot of a warp: one item (tile, chunk) of weights and its scale and zero
// entries (slots * 32 bytes each; per-channel: the tile's 32 bytes).
constexpr int item_weight_bytes(int bits) { return bits * 512; }
constexpr int item_scale_bytes(int slots) { return slots * 32; }
constexpr int ring_slot_bytes(int bits, int slots, bool zeros) {
  return item_weight_bytes(bits) + (zeros ? 2 : 1) * item_scale_bytes(slots);
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
  int warps = 1;             // warps per block (blockDim.x / 32)
  int ring = 2;              // ring slots per warp (1..kMaxRing)
  int slot_bytes = 0;        // bytes of one ring slot (ring_slot_bytes())
  int bulk = 0;              // fill the rings with cp.async.bulk (sm_90), else cp.async
  int scale_bf16 = 0;        // scales / zeros stored as bf16 (else f16)
  int out_dtype = kOutF16;   // GemvOut
  int has_zeros = 0;         // zero points stored (integer or float)
  int has_bias = 0;
  int x_in_smem = 1;         // activations staged in shared memory (else read from L2)
  int x_smem_stride = 0;     // bytes between rows of the staged activations
  int corr_offset = 0;       // bytes: the correction table (chunks x slots x 64 bytes)
  int cx_offset = 0;         // bytes: the activation-sum table (zero points, int8), same size
  int part_offset = 0;       // bytes: partial sums, kRedBufs x warps x m x 16 floats
  int bar_offset = 0;        // bytes: mbarriers, warps x ring (ring slots) + 2 x kRedBufs
  int ring_offset = 0;       // bytes: the warps' item rings (warps x ring x slot_bytes)
  int l2_prefetch = 0;       // bytes of a block's weights past its rings to ask L2 for early
};

}  // namespace lowbit::gemv
