// Internal: the arguments and workspace geometry of the bit-serial GEMV (smxx_gemv_bitserial.cuh:
// 1- and 2-bit weights of the gemv layout on the single-bit tensor-core mma). Host and device;
// no CUDA headers needed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/gemv/smxx_gemv_layout.hpp"
#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::gemv {

// Activations become kXPlanes bit planes of a 16-bit two's-complement fixed point value per
// 128-column block (docs/kernels/gemv.md, "Bit-serial"): two mma n-tiles of 8 planes.
inline constexpr int kXPlanes = 16;
inline constexpr int kXBlock = 128;     // columns sharing one activation scale
inline constexpr int kXSegMax = 8;      // segments (groups) per 256-column chunk: group 32
inline constexpr int kBsMaxWarps = 16;  // warps per block (the block's k-split)
inline constexpr int kBsPhaseTiles = 8;  // tiles whose partial sums a block keeps between two barriers
inline constexpr int kBsPartFloats = 2 * kBsPhaseTiles * kBsMaxWarps * 16;  // two phase buffers (shared)

struct BitserialParams {
  const void* x = nullptr;           // (m, k) f16 / bf16, row-major, 16-byte aligned
  const void* w = nullptr;           // gemv layout, 16-byte aligned
  const uint32_t* scales = nullptr;  // gemv layout entries (rows g, g+8)
  const uint32_t* zeros = nullptr;   // same entries, or null (symmetric)
  const void* bias = nullptr;        // (n) in the output dtype, or null
  void* y = nullptr;                 // (m, n) output dtype
  uint32_t* planes = nullptr;        // workspace: (chunks, 32 lanes, 4 bits words, 2 n-tiles)
  int32_t* xsum = nullptr;           // workspace: (chunks, kXSegMax) sums of the fixed-point values per segment
  float* xscale = nullptr;           // workspace: (chunks, 2) activation scale per 128-column block

  int n = 0;
  int k = 0;          // multiple of 32
  int tiles = 0;      // ceil(n / 16)
  int chunks = 0;     // ceil(k / 256)
  int seg_cols = 0;   // columns per segment: the group (32, 64, 128), 128 per-channel
  int warps = 1;      // warps per block (<= chunks, <= kBsMaxWarps)
  int x_bf16 = 0;
  int scale_bf16 = 0;
  int out_dtype = 0;  // GemvOut
  int has_zeros = 0;
  int has_bias = 0;
  int tile_interleave = 1;  // block b of G owns tiles b, b + G, ... (else a contiguous range)
};

// Workspace geometry (bytes, each part 256-byte aligned).
struct BitserialWorkspace {
  std::size_t planes_offset = 0, xsum_offset = 0, xscale_offset = 0, bytes = 0;
};
inline BitserialWorkspace bitserial_workspace(int bits, int64_t chunks) {
  auto up = [](std::size_t v) { return (v + 255) / 256 * 256; };
  BitserialWorkspace w;
  const std::size_t mc = static_cast<std::size_t>(chunks);
  w.planes_offset = 0;
  w.xsum_offset = up(mc * 32 * 4 * bits * 2 * sizeof(uint32_t));
  w.xscale_offset = w.xsum_offset + up(mc * kXSegMax * sizeof(int32_t));
  w.bytes = w.xscale_offset + up(mc * 2 * sizeof(float));
  return w;
}

// Where the activation planes and the A masks come from (host and device: the CPU tests check
// them against the layout's code_pos() / code_bit()).
namespace bitserial {

// Column (0..255 of the chunk) of bit b (0..31) of word w of a lane with index t in its quad:
// the register whose field holds that bit (1- and 2-bit fields: one word per bundle), then its
// code position (code_pos(): the same for every g).
LOWBIT_HD constexpr int column_of(int bits, int w, int t, int b) {
  return code_pos(t, w * bundle_regs(bits) + (b & 15) / bits, b >> 4).col;
}

// The bits of weight bit j of row g (hi = 0: even registers) or g + 8 (hi = 1: odd registers)
// in a word: 1-bit, register r at bit r; 2-bit, register r at bits 2r, 2r + 1.
LOWBIT_HD constexpr uint32_t row_mask(int bits, int hi, int j) {
  return bits == 1 ? (hi ? 0xAAAAAAAAu : 0x55555555u) : ((hi ? 0x44444444u : 0x11111111u) << j);
}

}  // namespace bitserial

}  // namespace lowbit::gemv
