// The "gemv" weight layout of 1..8-bit integer weights (layout names "gemv_w<bits>_v1"),
// shared by the host packer (src/host/pack_gemv.cpp), the GEMV kernels and the CPU tests.
// docs/kernels/gemv.md, "Layout", is the written specification; this header is its
// executable form and the only place the geometry and the bit positions are defined.
// Host and device (LOWBIT_HD); no CUDA headers needed.
//
// Geometry. W is (n, k). Rows are cut in tiles of 16 (tile i = rows 16i..16i+15), k in
// chunks of 256 (chunk c = columns 256c..256c+255); both are zero-padded at the end, so any
// n and any k work. The (tile, chunk) block is bits * 512 bytes: `bits` slices of 512 bytes,
// lane L's 16 bytes of slice s at 512 s + 16 L. One warp-wide 16-byte load per slice fetches
// a whole slice, coalesced, for every width: odd widths included. Blocks are stored tile
// by tile, chunk by chunk inside a tile.
//
// What a lane holds. Lane L (g = L / 4, t = L % 4) owns 128 codes of its (tile, chunk): rows
// g and g+8 of the tile, columns 32 p + 8 t + j of the chunk (pair p = 0..7, j = 0..7). They
// are the A operands of 16 mma.m16n8k16 steps (two per pair). The mma's k index is mapped
// to columns so that each lane's activations are 8 consecutive columns per pair (one 16-byte
// load) and each step stays inside one 32-column slice of a group:
//   step s = 2 p + h (h = 0, 1) covers columns 32 p + {0..31}; its A register e (e = 0..3,
//   a[e] of mma.cuh) holds row g + 8 (e & 1), columns 32 p + 8 t + 4 h + 2 (e >> 1) + {0, 1}
//   (low half, high half); its B registers are the activations of the same columns.
// So register R = 8 p + 4 h + e (0..63) of the lane's chunk holds two codes: code_pos().
//
// Bit placement. The lane's 4 * bits 32-bit words (word 4 s + i = component i of slice s)
// are cut in bundles of bundle_words(bits) words holding bundle_regs(bits) registers. Both
// halves of a register use the same bit positions: the low code in bits 0..15 of its word,
// the high code in bits 16..31 (code_bit()). A field of b bits at bits p..p+b-1 of a 16-bit
// half becomes the fp16 value 2^(10-p) + q with one lop3 (q | the exponent of 2^(10-p));
// p + b <= 10 for fp16 (7 for bf16), reached with at most two shifts per word. The widths
// that do not divide 16 put their last register's bits in the spare top bits of the bundle's
// words (3-bit: bit 15 of 3 words; 5-bit: bit 15 of 5 words; 6-bit: bits 12..15 of 3 words).
//   bits | words/bundle | regs/bundle | fields of a 16-bit half (bit offset of each field)
//   1    | 1            | 16          | reg r at bit r
//   2    | 1            | 8           | reg r at 2r
//   3    | 3            | 16          | word w: regs 5w..5w+4 at 0, 3, 6, 9, 12; reg 15 bit j = bit 15 of word j
//   4    | 1            | 4           | reg r at 4r
//   5    | 5            | 16          | word w: regs 3w..3w+2 at 0, 5, 10; reg 15 bit j = bit 15 of word j
//   6    | 3            | 8           | word w: regs 2w, 2w+1 at 0, 6; reg 6 = word0[12..15] + word1[12..13] << 4,
//        |              |             | reg 7 = word1[14..15] + word2[12..15] << 2
//   8    | 1            | 2           | reg r at 8r
//
// Decode (raw_reg()): register R becomes the pair of patterns {c_R + q, c_R + q} in the
// activation dtype, with c_R = reg_offset() a power of two fixed by the layout (the same
// for every lane, tile and chunk). The kernel never subtracts c_R per weight: one extra mma
// per step with A = -(c_R + z_sym) on the same activations gives -sum (c + z) x, the start
// value of every tile's accumulation (docs/kernels/gemv.md, "Arithmetic"). bf16 8-bit codes
// do not fit a 7-bit mantissa: they decode to q exactly (c_R = 0) with two lop3 and two
// half2 operations.
//
// Scales and zero points (scale dtype f16 or bf16; integer zero points stored as exact
// values of that dtype). 32-bit entries: low half = row g, high half = row g + 8 of a tile.
// Grouped (group 32, 64, 128): entry (tile, chunk, slot, g) at
//   ((tile * chunks + chunk) * slots + slot) * 8 + g, slots = 256 / group_size,
// slot = the group's index inside the chunk. Per-channel: entry (tile, g) at tile * 8 + g.
// Padded rows and groups hold scale 0 and zero 0.
#pragma once

#include <cstdint>

#include "cuda/ptx/lop3.cuh"
#include "cuda/ptx/prmt.cuh"
#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::gemv {

inline constexpr int kTileRows = 16;       // the mma M: rows of W per tile
inline constexpr int kChunkK = 256;        // columns of W per chunk
inline constexpr int kLanes = 32;
inline constexpr int kSliceBytes = 512;    // one warp-wide 16-byte load
inline constexpr int kPairs = 8;           // 32-column pairs of steps per chunk
inline constexpr int kRegsPerChunk = 64;   // A registers per lane per (tile, chunk)
inline constexpr int kEntriesPerSlot = 8;  // scale entries (row pairs g, g+8) per tile and slot

LOWBIT_HD constexpr bool layout_bits_supported(int bits) {
  return bits == 1 || bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8;
}
LOWBIT_HD constexpr int words_per_lane(int bits) { return 4 * bits; }
LOWBIT_HD constexpr int bundle_words(int bits) {
  return bits == 3 ? 3 : bits == 5 ? 5 : bits == 6 ? 3 : 1;
}
LOWBIT_HD constexpr int bundle_regs(int bits) {
  return bits == 1 ? 16 : bits == 2 ? 8 : bits == 3 ? 16 : bits == 4 ? 4 : bits == 5 ? 16
         : bits == 6 ? 8 : 2;
}
// Scale slots per (tile, chunk): 256 / group, 1 for per-channel (group 0).
LOWBIT_HD constexpr int scale_slots(int group_size) {
  return group_size == 0 ? 1 : kChunkK / group_size;
}

// Where the codes of register R (0..63) of lane `lane` sit inside the (tile, chunk):
// row in [0, 16), column in [0, 256); half 0 = low 16 bits, 1 = high.
struct CodePos {
  int row;
  int col;
};
LOWBIT_HD constexpr CodePos code_pos(int lane, int reg, int half) {
  return CodePos{lane / 4 + 8 * (reg & 1),
                 32 * (reg >> 3) + 8 * (lane % 4) + 4 * ((reg >> 2) & 1) + 2 * ((reg >> 1) & 1) +
                     half};
}

// Where bit j of the code in register R sits: word (0 .. 4 bits - 1) and bit inside the
// low half (the high-half code uses bit + 16 of the same word).
struct BitPos {
  int word;
  int bit;
};
LOWBIT_HD constexpr BitPos code_bit(int bits, int reg, int j) {
  const int bw = bundle_words(bits), br = bundle_regs(bits);
  const int base = (reg / br) * bw;  // first word of the bundle
  const int r = reg % br;            // register inside the bundle
  switch (bits) {
    case 1: return BitPos{base, r};
    case 2: return BitPos{base, 2 * r + j};
    case 4: return BitPos{base, 4 * r + j};
    case 8: return BitPos{base, 8 * r + j};
    case 3:
      return r < 15 ? BitPos{base + r / 5, 3 * (r % 5) + j} : BitPos{base + j, 15};
    case 5:
      return r < 15 ? BitPos{base + r / 3, 5 * (r % 3) + j} : BitPos{base + j, 15};
    case 6:
      if (r < 6) return BitPos{base + r / 2, 6 * (r % 2) + j};
      if (r == 6) return j < 4 ? BitPos{base, 12 + j} : BitPos{base + 1, 12 + (j - 4)};
      return j < 2 ? BitPos{base + 1, 14 + j} : BitPos{base + 2, 12 + (j - 2)};
    default: return BitPos{0, 0};
  }
}

// ---------------------------------------------------------------------------------------
// Decode of one register. fp16: the pattern (25 - p) << 10 is 2^(10-p), whose mantissa ulp
// is 2^(10-p) * 2^-10 = 1 at bit p, so OR-ing a b-bit code q into bits p..p+b-1 (p + b <= 10)
// gives exactly 2^(10-p) + q. bf16 likewise with (134 - p) << 7 = 2^(7-p), p + b <= 7.
// ---------------------------------------------------------------------------------------
namespace detail {

LOWBIT_HD constexpr uint32_t twice(uint32_t half_pattern) { return half_pattern | (half_pattern << 16); }
LOWBIT_HD constexpr uint32_t magic(bool bf16, int p) {
  return twice(bf16 ? static_cast<uint32_t>(134 - p) << 7 : static_cast<uint32_t>(25 - p) << 10);
}
LOWBIT_HD constexpr uint32_t field_mask(int b, int p) { return twice(((1u << b) - 1u) << p); }

// One field: shift the word (right for s > 0, left for s < 0) so the field lands at bit p.
struct Field {
  int word;   // word inside the bundle
  int shift;  // >0: right shift, <0: left shift
  int p;      // bit of the field after the shift
};

// The fields of the registers that lie inside one word (all but the gathered ones), per
// width and dtype. Shifts are chosen so that every field lands at p + b <= 10 (7 for bf16)
// and, for 1- and 2-bit fields, high enough that the offset 2^(10-p) stays <= 64 (the
// correction then cancels a small multiple of the result: docs/kernels/gemv.md, "Accuracy").
LOWBIT_HD constexpr Field field_of(int bits, bool bf16, int r) {
  if (!bf16) {
    switch (bits) {
      case 1:
        return r < 4 ? Field{0, -6, r + 6} : r < 10 ? Field{0, 0, r} : Field{0, 6, r - 6};
      case 2: {
        const int f = 2 * r;
        return f < 4 ? Field{0, -6, f + 6} : f <= 8 ? Field{0, 0, f} : Field{0, 6, f - 6};
      }
      case 3: {
        const int w = r / 5, f = 3 * (r % 5);
        return f == 0 ? Field{w, -6, 6} : f <= 6 ? Field{w, 0, f} : Field{w, 6, f - 6};
      }
      case 4: return r < 2 ? Field{0, 0, 4 * r} : Field{0, 8, 4 * r - 8};
      case 5: {
        const int w = r / 3, f = 5 * (r % 3);
        return f <= 5 ? Field{w, 0, f} : Field{w, 5, 5};
      }
      case 6: {
        const int w = r / 2, f = 6 * (r % 2);
        return Field{w, f, 0};
      }
      default: return Field{0, 0, 0};
    }
  }
  switch (bits) {
    case 1: return r < 7 ? Field{0, 0, r} : r < 14 ? Field{0, 7, r - 7} : Field{0, 14, r - 14};
    case 2: {
      const int f = 2 * r;
      return f <= 4 ? Field{0, 0, f} : f <= 10 ? Field{0, 6, f - 6} : Field{0, 12, f - 12};
    }
    case 3: {
      const int w = r / 5, f = 3 * (r % 5);
      return f <= 3 ? Field{w, 0, f} : f <= 9 ? Field{w, 6, f - 6} : Field{w, 12, 0};
    }
    case 4: return Field{0, 4 * r, 0};
    case 5: {
      const int w = r / 3, f = 5 * (r % 3);
      return Field{w, f, 0};
    }
    case 6: {
      const int w = r / 2, f = 6 * (r % 2);
      return Field{w, f, 0};
    }
    default: return Field{0, 0, 0};
  }
}

// Bit position of a gathered register's field (3-, 5-, 6-bit widths).
LOWBIT_HD constexpr int gather_p(int bits, bool bf16) {
  return bits == 3 ? (bf16 ? 4 : 6) : bits == 5 ? (bf16 ? 0 : 5) : 0;
}
LOWBIT_HD constexpr bool is_gathered(int bits, int r) {
  return (bits == 3 && r == 15) || (bits == 5 && r == 15) || (bits == 6 && r >= 6);
}

LOWBIT_HD constexpr uint32_t shifted(uint32_t w, int s) { return s >= 0 ? w >> s : w << -s; }

}  // namespace detail

// Bit offset p of register R's field after decoding, and the value offset c_R = 2^(10-p)
// (fp16) or 2^(7-p) (bf16) that raw_reg() adds to the code (0 for bf16 8-bit).
LOWBIT_HD constexpr int reg_field_p(int bits, bool bf16, int reg) {
  const int r = reg % bundle_regs(bits);
  if (bits == 8) return 0;
  if (detail::is_gathered(bits, r)) return detail::gather_p(bits, bf16);
  return detail::field_of(bits, bf16, r).p;
}
LOWBIT_HD constexpr float reg_offset(int bits, bool bf16, int reg) {
  if (bits == 8) return bf16 ? 0.0f : 1024.0f;
  const int p = reg_field_p(bits, bf16, reg);
  return static_cast<float>(1 << ((bf16 ? 7 : 10) - p));
}

// Register R of a lane's chunk as patterns {c_R + q_lo, c_R + q_hi} of the activation dtype
// (fp16: bf16 = false). `w` is the lane's 4 * bits words. Bit operations only, except bf16
// 8-bit (see raw_reg_bf16_w8). With R a compile-time constant everything folds to one lop3
// (one prmt for fp16 8-bit) plus shared shifts.
LOWBIT_HD uint32_t raw_reg_bf16_w8(uint32_t w);

template <int kBits, bool kBf16>
LOWBIT_HD uint32_t raw_reg(const uint32_t* w, int reg) {
  constexpr int kBw = bundle_words(kBits), kBr = bundle_regs(kBits);
  const uint32_t* b = w + (reg / kBr) * kBw;  // the bundle's words
  const int r = reg % kBr;
  if constexpr (kBits == 8) {
    if constexpr (kBf16) {
      return raw_reg_bf16_w8(r == 0 ? b[0] : b[0] >> 8);
    } else {
      // prmt selector 0x4240 / 0x4341: result bytes (w.b0, 0x64, w.b2, 0x64) / (w.b1, 0x64,
      // w.b3, 0x64): halves 0x64qq = 1024 + q.
      return ptx::prmt(b[0], 0x64646464u, r == 0 ? 0x4240u : 0x4341u);
    }
  } else {
    if (detail::is_gathered(kBits, r)) {
      constexpr int kP = detail::gather_p(kBits, kBf16);
      uint32_t x = 0;
      if constexpr (kBits == 3) {
        // bit 15 of word j -> bit kP + j (and 31 -> 16 + kP + j).
        x = (detail::shifted(b[0], 15 - kP) & detail::twice(1u << kP)) |
            (detail::shifted(b[1], 14 - kP) & detail::twice(2u << kP)) |
            (detail::shifted(b[2], 13 - kP) & detail::twice(4u << kP));
      } else if constexpr (kBits == 5) {
        for (int j = 0; j < 5; ++j)  // constant trip count: unrolled
          x |= detail::shifted(b[j], 15 - kP - j) & detail::twice(1u << (kP + j));
      } else {  // 6-bit, kP = 0
        x = r == 6 ? ((b[0] >> 12) & 0x000F000Fu) | ((b[1] >> 8) & 0x00300030u)
                   : ((b[1] >> 14) & 0x00030003u) | ((b[2] >> 10) & 0x003C003Cu);
      }
      return x | detail::magic(kBf16, kP);
    }
    const detail::Field f = detail::field_of(kBits, kBf16, r);
    return ptx::lop3<ptx::kLutAndOr>(detail::shifted(b[f.word], f.shift),
                                     detail::field_mask(kBits, f.p), detail::magic(kBf16, f.p));
  }
}

// bf16 8-bit: lo7 = 128 + (q & 127) and v2 = 128 + 64 (q >> 7) as bf16 patterns (two lop3),
// then (2 v2 - 384) + lo7 = q exactly: 2 v2 - 384 is -128 or 0 and q <= 255 has 8
// significant bits, so neither operation rounds. `w` holds the code in bits 0..7 / 16..23.
LOWBIT_HD uint32_t raw_reg_bf16_w8(uint32_t w) {
  const uint32_t lo7 = ptx::lop3<ptx::kLutAndOr>(w, 0x007F007Fu, 0x43004300u);
  const uint32_t v2 = ptx::lop3<ptx::kLutAndOr>(w >> 1, 0x00400040u, 0x43004300u);
#if LOWBIT_DEVICE_CODE
  uint32_t d;
  // fma.rn.bf16x2 d = v2 * 2 - 384, then add.rn.bf16x2 d = d + lo7 (PTX ISA "Half Precision
  // Floating-Point Instructions"; bf16 add needs sm_90, so it is written as fma with 1.0).
  // Operands: 2.0 = 0x4000, -384 = 0xC3C0, 1.0 = 0x3F80 (bf16 patterns, both halves).
  asm("{\n\t.reg .b32 t;\n\t"
      "fma.rn.bf16x2 t, %1, %3, %4;\n\t"
      "fma.rn.bf16x2 %0, %2, %5, t;\n\t}"
      : "=r"(d)
      : "r"(v2), "r"(lo7), "r"(0x40004000u), "r"(0xC3C0C3C0u), "r"(0x3F803F80u));
  return d;
#else
  // Host: the same arithmetic on the (exact) integer values.
  uint32_t d = 0;
  for (int h = 0; h < 2; ++h) {
    const uint32_t lo = (lo7 >> (16 * h)) & 0x7Fu;
    const uint32_t hi = ((v2 >> (16 * h)) >> 6) & 1u;
    const uint32_t q = lo + 128u * hi;
    // q as bf16: exact (q < 256); build the bits from the float.
    const float f = static_cast<float>(q);
    uint32_t u = 0;
    static_assert(sizeof(float) == 4, "float is binary32");
    __builtin_memcpy(&u, &f, 4);
    d |= (u >> 16) << (16 * h);
  }
  return d;
#endif
}

// ---------------------------------------------------------------------------------------
// int8 activations (mma.m16n8k32 u8 x s8): the same words as unsigned bytes. Pair p of a
// lane gives the 4 A registers of one k32 mma: a[0] = row g, a[1] = row g+8 (first 4
// columns of each half-pair), a[2], a[3] the next 4 (mma_int8.cuh). 4-bit: (w & 0x0F0F0F0F)
// of the step's word is row g, columns (0, 2, 1, 3) of the step, ((w >> 4) & ..) row g+8;
// the activations are staged in that order (int8_col_perm()). 8-bit: one prmt per register,
// natural order.
// ---------------------------------------------------------------------------------------
LOWBIT_HD constexpr bool int8_layout_bits_supported(int bits) { return bits == 4 || bits == 8; }

// The column order of the 4 bytes of an int8 A / B register, relative to the step's first
// column: byte i holds column int8_col_perm(bits, i).
LOWBIT_HD constexpr int int8_col_perm(int bits, int i) {
  return bits == 4 ? (i == 1 ? 2 : i == 2 ? 1 : i) : i;
}

template <int kBits>
LOWBIT_HD void int8_pair(const uint32_t* w, int pair, uint32_t (&a)[4]) {
  static_assert(kBits == 4 || kBits == 8, "int8 activations take 4- and 8-bit weights");
  if constexpr (kBits == 4) {
    const uint32_t w0 = w[2 * pair], w1 = w[2 * pair + 1];
    a[0] = w0 & 0x0F0F0F0Fu;
    a[1] = (w0 >> 4) & 0x0F0F0F0Fu;
    a[2] = w1 & 0x0F0F0F0Fu;
    a[3] = (w1 >> 4) & 0x0F0F0F0Fu;
  } else {
    // Step h words: (4p + 2h) = regs e0 (row g) / e1 (row g+8) as bytes (g k0, g+8 k0, g k1,
    // g+8 k1), (4p + 2h + 1) the same for k2, k3. prmt 0x6420 takes bytes 0, 2 of each:
    // row g, columns 0..3; 0x7531 row g+8.
    const uint32_t* s = w + 4 * pair;
    a[0] = ptx::prmt(s[0], s[1], 0x6420u);
    a[1] = ptx::prmt(s[0], s[1], 0x7531u);
    a[2] = ptx::prmt(s[2], s[3], 0x6420u);
    a[3] = ptx::prmt(s[2], s[3], 0x7531u);
  }
}

}  // namespace lowbit::gemv
