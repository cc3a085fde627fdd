// The "tiled" weight layout of 4- and 8-bit integer weights (layout names "tiled_w4_v1",
// "tiled_w8_v1"), shared by the host packer, the on-device repack, the sm80 mixed GEMM and
// any other kernel that reads it (the GEMV family). docs/kernels/mixed_gemm.md, "Layout",
// is the written specification; this header is its executable form and the only place the
// geometry is computed. Host and device (LOWBIT_HD); no CUDA headers needed.
//
// Geometry. W is (n, k). Rows are grouped in strips of 16 (strip s = rows 16s..16s+15).
// Each strip is stored contiguously (16 * k * bits / 8 bytes), strip after strip. Inside a
// strip, k is cut into chunks of kChunkK(bits) columns (64 for 4-bit, 32 for 8-bit); chunk
// kc is 512 bytes at offset 512 * kc: 32 lanes x 16 bytes, lane t at 16 t. So one warp-wide
// 16-byte load (lane t reads bytes 16t..16t+15) fetches one whole chunk, coalesced, and
// lane t's 16 bytes are exactly its mma.m16n8k16 A fragments (rows = the strip's 16
// channels, columns = k) for the chunk's k16 steps: 4 steps (4-bit) or 2 steps (8-bit).
//
// Lane t, with g = t / 4 and c = 2 (t % 4), holds 4 little-endian 32-bit words w0..w3:
//   4-bit: word j = k16 step j. Nibble i (bits 4i..4i+3) holds
//            row g + 8 (i & 1), column 16 j + c + 8 ((i >> 1) & 1) + (i >> 2),
//          i.e. nibbles (0, 4) = A reg 0 (row g, cols c, c+1), (1, 5) = reg 1 (row g+8),
//          (2, 6) = reg 2 (row g, cols c+8, c+9), (3, 7) = reg 3 (row g+8, cols c+8, c+9):
//          (w & 0x000f000f) and ((w >> 8) & 0x000f000f) are regs 0 and 2 as two 16-bit
//          lanes, the 0x00f000f0 masks regs 1 and 3 (the int -> f16 trick, dequant below).
//   8-bit: words 2s, 2s+1 = k16 step s. Byte i of word j holds
//            row g + 8 (i & 1), column 16 (j >> 1) + c + 8 (j & 1) + (i >> 1),
//          i.e. bytes (0, 2) of word 2s = reg 0, (1, 3) = reg 1, word 2s+1 gives regs 2, 3.
//
// Scales (activation dtype, f16 or bf16) and integer zero points (u8) of group g: row g of
// a (groups, n) array whose row is ordered strip by strip, and inside a strip as the pairs
// (g, g+8): position 16 s + 2 r + h holds channel 16 s + r + 8 h (r < 8, h < 2). So the
// one 32-bit load of a lane gives the scales of both of its rows (g and g+8), and the
// 16-bit load the two zero points. Per-channel weights have one group.
//
// Act-order (GPTQ g_idx): the packer sorts the columns by group (stable), so the packed
// weight is an ordinary grouped weight of k' columns whose packed column j is the original
// column perm[j] (or a zero-padding column, perm[j] = -1, when groups are not all exactly
// group_size long; section "Act-order" of the doc). The index buffer is int32:
//   [0] = k' (packed columns, a multiple of 64), [1] = packed groups g', [2] = [3] = 0,
//   [4 + j] = perm[j] for j < k', [4 + k' + i] = original group of packed group i (i < g').
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::tiled {

inline constexpr int kStripRows = 16;     // channels per strip (the mma m16)
inline constexpr int kLanes = 32;         // chunks of 16 bytes per 512-byte chunk row
inline constexpr int kLaneBytes = 16;     // one lane's share of a chunk
inline constexpr int kChunkBytes = kLanes * kLaneBytes;  // 512
inline constexpr int kActOrderHeader = 4;  // int32 words before perm[] in the index buffer

LOWBIT_HD constexpr int chunk_k(int bits) { return bits == 4 ? 64 : 32; }

// A position inside a strip and a chunk: row n in [0, 16), column k in [0, chunk_k).
struct Pos {
  int n;
  int k;
};

// 4-bit: where nibble `nib` (0..7) of word `word` (0..3) of lane `lane` sits.
LOWBIT_HD constexpr Pos w4_code_pos(int lane, int word, int nib) {
  return Pos{lane / 4 + 8 * (nib & 1), 16 * word + 2 * (lane % 4) + 8 * ((nib >> 1) & 1) + (nib >> 2)};
}

// 8-bit: where byte `byte` (0..3) of word `word` (0..3) of lane `lane` sits.
LOWBIT_HD constexpr Pos w8_code_pos(int lane, int word, int byte) {
  return Pos{lane / 4 + 8 * (byte & 1), 16 * (word >> 1) + 2 * (lane % 4) + 8 * (word & 1) + (byte >> 1)};
}

// The mma.m16n8k16 A fragment: element `half` (0, 1) of register `reg` (0..3) of `lane`,
// inside a 16 x 16 tile (PTX ISA, "Matrix Fragments for mma.m16n8k16").
LOWBIT_HD constexpr Pos frag_a_pos(int lane, int reg, int half) {
  return Pos{lane / 4 + 8 * (reg & 1), 2 * (lane % 4) + 8 * (reg >> 1) + half};
}

// Byte offset of lane `lane`'s 16 bytes of chunk `kc` of strip `strip`, for k columns.
LOWBIT_HD constexpr int64_t chunk_offset(int bits, int64_t k, int64_t strip, int64_t kc, int lane) {
  return ((strip * (k / chunk_k(bits)) + kc) * kLanes + lane) * kLaneBytes;
}

// Element index of channel `row` of group `g` in the packed scale / zero arrays (n columns).
LOWBIT_HD constexpr int64_t scale_index(int64_t n, int64_t g, int64_t row) {
  return g * n + (row / 16) * 16 + 2 * (row % 8) + (row % 16) / 8;
}

// ---------------------------------------------------------------------------------------
// Raw decode: bit operations only, exact. Each function turns one k16 step of a lane's
// chunk into the 4 registers of an A fragment holding (magic + code) patterns; the
// arithmetic that subtracts the magic and the zero point and applies the scale is in
// sm80_tiled_decode.cuh. Host-callable so CPU tests can check the layout.
// ---------------------------------------------------------------------------------------

// f16 patterns: 0x6400 is 1024.0 with an exponent whose mantissa ulp is 1, so 0x6400 | q
// is the f16 value 1024 + q for q < 1024 (the TensorRT-LLM / Marlin trick). A nibble left
// at bits 4..7 gives 1024 + 16 q instead (regs 1 and 3), fixed by one fma with 1/16.
inline constexpr uint32_t kF16Magic2 = 0x64006400u;
// bf16 patterns: 0x4300 is 128.0 with mantissa ulp 1, so 0x4300 | q = 128 + q for q < 128.
inline constexpr uint32_t kBf16Magic2 = 0x43004300u;
// f32 pattern 0x4B000000 is 2^23 (ulp 1): 0x4B000000 | q = 8388608 + q (8-bit to bf16).
inline constexpr uint32_t kF32Magic = 0x4B000000u;

// 4-bit -> f16: r[0] = {1024 + q(g, c), 1024 + q(g, c+1)}, r[1] = {1024 + 16 q(g+8, c), ..},
// r[2] = {1024 + q(g, c+8), ..}, r[3] = {1024 + 16 q(g+8, c+8), ..}. 4 lop3 + 1 shift.
LOWBIT_HD void raw_w4_f16(uint32_t w, uint32_t (&r)[4]);
// 4-bit -> bf16: r[i] = {128 + q, 128 + q} for the same positions (no x16 form: a bf16
// mantissa has 7 bits, a nibble at bits 4..7 would reach the exponent). 4 lop3 + 3 shifts.
LOWBIT_HD void raw_w4_bf16(uint32_t w, uint32_t (&r)[4]);
// 8-bit -> f16 from words 2s (lo) and 2s+1 (hi): r[i] = {1024 + q, 1024 + q}. 4 prmt.
LOWBIT_HD void raw_w8_f16(uint32_t lo, uint32_t hi, uint32_t (&r)[4]);
// 8-bit -> f32 patterns 8388608 + q of one word: f[0] = byte 0, f[1] = byte 2, f[2] = byte 1,
// f[3] = byte 3, so (f[0], f[1]) is reg (row g) and (f[2], f[3]) reg (row g+8). 4 prmt.
LOWBIT_HD void raw_w8_f32(uint32_t w, uint32_t (&f)[4]);
// 8-bit -> bf16 as a difference, for q - 128 (symmetric weights) without f32: with q =
// 128 h + l (h the top bit), m = 0x4300 | l = 128 + l and s = 0x4380 ^ (h << 7) = 256 - 128 h,
// so m - s = q - 128 exactly (every term an integer below 2^8). m[0], s[0]: bytes 0 and 2 of
// the word (the register of row g), m[1], s[1]: bytes 1 and 3 (row g + 8). 4 lop3 + 1 shift.
LOWBIT_HD void raw_w8_bf16_split(uint32_t w, uint32_t (&m)[2], uint32_t (&s)[2]);

}  // namespace lowbit::tiled

// The definitions need the lop3/prmt wrappers, host-callable as well.
#include "cuda/ptx/lop3.cuh"
#include "cuda/ptx/prmt.cuh"

namespace lowbit::tiled {

LOWBIT_HD void raw_w4_f16(uint32_t w, uint32_t (&r)[4]) {
  constexpr uint32_t kLo = 0x000f000fu;  // nibbles 0 and 4 (and, after >> 8, 2 and 6)
  constexpr uint32_t kHi = 0x00f000f0u;  // nibbles 1 and 5 (3 and 7), left at bits 4..7
  const uint32_t w8 = w >> 8;
  r[0] = ptx::lop3<ptx::kLutAndOr>(w, kLo, kF16Magic2);
  r[1] = ptx::lop3<ptx::kLutAndOr>(w, kHi, kF16Magic2);
  r[2] = ptx::lop3<ptx::kLutAndOr>(w8, kLo, kF16Magic2);
  r[3] = ptx::lop3<ptx::kLutAndOr>(w8, kHi, kF16Magic2);
}

LOWBIT_HD void raw_w4_bf16(uint32_t w, uint32_t (&r)[4]) {
  constexpr uint32_t kLo = 0x000f000fu;
  r[0] = ptx::lop3<ptx::kLutAndOr>(w, kLo, kBf16Magic2);
  r[1] = ptx::lop3<ptx::kLutAndOr>(w >> 4, kLo, kBf16Magic2);
  r[2] = ptx::lop3<ptx::kLutAndOr>(w >> 8, kLo, kBf16Magic2);
  r[3] = ptx::lop3<ptx::kLutAndOr>(w >> 12, kLo, kBf16Magic2);
}

LOWBIT_HD void raw_w8_f16(uint32_t lo, uint32_t hi, uint32_t (&r)[4]) {
  // Selector 0x5250: result bytes = (a.b0, 0x64, a.b2, 0x64): halves 0x64b0 and 0x64b2.
  // 0x5351 takes bytes 1 and 3 the same way.
  constexpr uint32_t kMagic4 = 0x64646464u;
  r[0] = ptx::prmt(lo, kMagic4, 0x5250u);
  r[1] = ptx::prmt(lo, kMagic4, 0x5351u);
  r[2] = ptx::prmt(hi, kMagic4, 0x5250u);
  r[3] = ptx::prmt(hi, kMagic4, 0x5351u);
}

LOWBIT_HD void raw_w8_bf16_split(uint32_t w, uint32_t (&m)[2], uint32_t (&s)[2]) {
  constexpr uint32_t kLow7 = 0x007f007fu, kTop = 0x00800080u, kSub = 0x43804380u;
  const uint32_t w8 = w >> 8;
  m[0] = ptx::lop3<ptx::kLutAndOr>(w, kLow7, kBf16Magic2);
  s[0] = ptx::lop3<ptx::kLutAndXor>(w, kTop, kSub);
  m[1] = ptx::lop3<ptx::kLutAndOr>(w8, kLow7, kBf16Magic2);
  s[1] = ptx::lop3<ptx::kLutAndXor>(w8, kTop, kSub);
}

LOWBIT_HD void raw_w8_f32(uint32_t w, uint32_t (&f)[4]) {
  // Selector 0x765x: result bytes = (a.bx, 0x00, 0x00, 0x4B) with b = 0x4B000000.
  f[0] = ptx::prmt(w, kF32Magic, 0x7650u);
  f[1] = ptx::prmt(w, kF32Magic, 0x7652u);
  f[2] = ptx::prmt(w, kF32Magic, 0x7651u);
  f[3] = ptx::prmt(w, kF32Magic, 0x7653u);
}

}  // namespace lowbit::tiled
