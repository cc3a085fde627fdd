// Per-chunk decode of the tiled layout (smxx_tiled_layout.hpp) into mma.m16n8k16 A
// fragments of dequantized f16 / bf16 weights: the reusable device half of the layout, for
// every kernel that reads it (the sm80 mixed GEMM, the GEMV family).
//
//   TiledDecoder<T, BITS>::Consts c = make_consts(zero_pair, scale_pair, apply_scale);
//   uint32_t a[4];
//   TiledDecoder<T, BITS>::step<S, kScale>(chunk, c, a);   // k16 step S of the lane's 16 bytes
//   TiledDecoder<T, BITS>::step<S, kScale, true>(...);     // the same for symmetric weights
//                                                          // (z = 2^(bits-1); only bf16 8-bit
//                                                          // has a cheaper path for it)
//
// a[] then holds W[g][c..c+1], W[g+8][c..c+1], W[g][c+8..c+9], W[g+8][c+8..c+9] of the
// strip (g = lane / 4, c = 2 (lane % 4), columns relative to the step), each value
// (q - z) * s rounded once to T: q - z is computed exactly (small integers in the magic
// number's exponent range) and the product with the scale is the only rounding. With
// kScale false the values are the exact integers q - z and the caller applies the scales to
// the fp32 mma results (per group or per channel); make_consts' scale part is then unused.
//
// Cost per 8 weights (one lane, one step): f16 4-bit 4 lop3 + 1 shift + 4 hsub2/hfma2
// (+ 4 hmul2 with scales); bf16 4-bit 4 lop3 + 3 shifts + 4 hsub2 (+4); f16 8-bit 4 prmt +
// 4 hsub2 (+4); bf16 8-bit 8 prmt + 8 fadd + 4 prmt (+4): bf16 cannot hold 128 + q exactly
// for q >= 128, so 8-bit codes go through f32 (2^23 + q) and are truncated to bf16, exact for
// the integers |q - z| <= 255; symmetric bf16 8-bit 8 lop3 + 2 shifts + 4 hsub2 (+4): the
// top bit of q picks the subtrahend (raw_w8_bf16_split).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/ptx/prmt.cuh"

namespace lowbit::tiled {

namespace detail {
LOWBIT_DEVICE uint32_t as_u32(__half2 h) { return *reinterpret_cast<uint32_t*>(&h); }
LOWBIT_DEVICE uint32_t as_u32(__nv_bfloat162 h) { return *reinterpret_cast<uint32_t*>(&h); }
LOWBIT_DEVICE __half2 as_h2(uint32_t u) { return *reinterpret_cast<__half2*>(&u); }
LOWBIT_DEVICE __nv_bfloat162 as_b2(uint32_t u) { return *reinterpret_cast<__nv_bfloat162*>(&u); }
// {lo16, lo16} and {hi16, hi16} of a pair: prmt selectors 0x1010 and 0x3232.
LOWBIT_DEVICE uint32_t bcast_lo(uint32_t p) { return ptx::prmt(p, p, 0x1010u); }
LOWBIT_DEVICE uint32_t bcast_hi(uint32_t p) { return ptx::prmt(p, p, 0x3232u); }
}  // namespace detail

// The scales of channels g and g + 8 (a packed pair, low half first) as fp32.
template <typename T>
LOWBIT_DEVICE void scale_pair_to_f32(uint32_t pair, float& s_g, float& s_g8);
template <>
LOWBIT_DEVICE void scale_pair_to_f32<__half>(uint32_t pair, float& s_g, float& s_g8) {
  const __half2 h = detail::as_h2(pair);
  s_g = __low2float(h);
  s_g8 = __high2float(h);
}
template <>
LOWBIT_DEVICE void scale_pair_to_f32<__nv_bfloat16>(uint32_t pair, float& s_g, float& s_g8) {
  s_g = __uint_as_float(pair << 16);  // bf16 is the upper half of an f32
  s_g8 = __uint_as_float(pair & 0xFFFF0000u);
}

template <typename T, int BITS>
struct TiledDecoder;

// ------------------------------------------------------------------------ f16, 4-bit
template <>
struct TiledDecoder<__half, 4> {
  static constexpr uint32_t kOne2 = 0x3C003C00u;  // {1.0, 1.0} in f16
  struct Consts {
    uint32_t z0;  // {1024 + z(g)} x2: subtracted from regs 0, 2
    uint32_t z1;  // {-(64 + z(g+8))} x2: added after x 1/16 to regs 1, 3
    uint32_t s0;  // {s(g)} x2
    uint32_t s1;  // {s(g+8)} x2
  };
  // zero_pair: bytes 0, 1 = z(g), z(g+8); scale_pair: halves s(g), s(g+8) (packed order).
  // Replaces the scale part of c (the zero part stays).
  LOWBIT_DEVICE static void set_scales(Consts& c, uint32_t scale_pair, bool apply_scale) {
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : kOne2;
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : kOne2;
  }
  LOWBIT_DEVICE static Consts make_consts(uint32_t zero_pair, uint32_t scale_pair, bool apply_scale) {
    Consts c;
    c.z0 = ptx::prmt(zero_pair, 0x64646464u, 0x4040u);               // 0x64zz = 1024 + z
    const uint32_t hi = ptx::prmt(zero_pair, 0x64646464u, 0x4141u);  // 1024 + z(g+8)
    // 960 - (1024 + z) = -(64 + z), exact.
    c.z1 = detail::as_u32(__hsub2(__half2half2(__ushort_as_half(0x6380)), detail::as_h2(hi)));
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : 0x3C003C00u;  // 1.0
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : 0x3C003C00u;
    return c;
  }
  template <int kStep, bool kScale, bool kSym = false>
  LOWBIT_DEVICE static void step(const uint4& chunk, const Consts& c, uint32_t (&a)[4]) {
    static_assert(kStep >= 0 && kStep < 4, "4-bit chunks hold 4 k16 steps");
    const uint32_t w = kStep == 0 ? chunk.x : kStep == 1 ? chunk.y : kStep == 2 ? chunk.z : chunk.w;
    uint32_t r[4];
    raw_w4_f16(w, r);
    const __half2 sixteenth = __half2half2(__ushort_as_half(0x2C00));  // 1/16
    const __half2 z0 = detail::as_h2(c.z0), z1 = detail::as_h2(c.z1);
    const __half2 s0 = detail::as_h2(c.s0), s1 = detail::as_h2(c.s1);
    __half2 v0 = __hsub2(detail::as_h2(r[0]), z0), v1 = __hfma2(detail::as_h2(r[1]), sixteenth, z1);
    __half2 v2 = __hsub2(detail::as_h2(r[2]), z0), v3 = __hfma2(detail::as_h2(r[3]), sixteenth, z1);
    if constexpr (kScale) {
      v0 = __hmul2(v0, s0), v1 = __hmul2(v1, s1), v2 = __hmul2(v2, s0), v3 = __hmul2(v3, s1);
    }
    a[0] = detail::as_u32(v0), a[1] = detail::as_u32(v1), a[2] = detail::as_u32(v2), a[3] = detail::as_u32(v3);
  }
};

// ------------------------------------------------------------------------ bf16, 4-bit
template <>
struct TiledDecoder<__nv_bfloat16, 4> {
  static constexpr uint32_t kOne2 = 0x3F803F80u;  // {1.0, 1.0} in bf16
  struct Consts {
    uint32_t z0, z1;  // {128 + z(g)} x2, {128 + z(g+8)} x2
    uint32_t s0, s1;
  };
  // Replaces the scale part of c (the zero part stays).
  LOWBIT_DEVICE static void set_scales(Consts& c, uint32_t scale_pair, bool apply_scale) {
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : kOne2;
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : kOne2;
  }
  LOWBIT_DEVICE static Consts make_consts(uint32_t zero_pair, uint32_t scale_pair, bool apply_scale) {
    Consts c;
    c.z0 = ptx::prmt(zero_pair, 0x43434343u, 0x4040u);  // 0x43zz = 128 + z (z < 16)
    c.z1 = ptx::prmt(zero_pair, 0x43434343u, 0x4141u);
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : 0x3F803F80u;  // 1.0
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : 0x3F803F80u;
    return c;
  }
  template <int kStep, bool kScale, bool kSym = false>
  LOWBIT_DEVICE static void step(const uint4& chunk, const Consts& c, uint32_t (&a)[4]) {
    static_assert(kStep >= 0 && kStep < 4, "4-bit chunks hold 4 k16 steps");
    const uint32_t w = kStep == 0 ? chunk.x : kStep == 1 ? chunk.y : kStep == 2 ? chunk.z : chunk.w;
    uint32_t r[4];
    raw_w4_bf16(w, r);
    const __nv_bfloat162 z0 = detail::as_b2(c.z0), z1 = detail::as_b2(c.z1);
    const __nv_bfloat162 s0 = detail::as_b2(c.s0), s1 = detail::as_b2(c.s1);
    __nv_bfloat162 v0 = __hsub2(detail::as_b2(r[0]), z0), v1 = __hsub2(detail::as_b2(r[1]), z1);
    __nv_bfloat162 v2 = __hsub2(detail::as_b2(r[2]), z0), v3 = __hsub2(detail::as_b2(r[3]), z1);
    if constexpr (kScale) {
      v0 = __hmul2(v0, s0), v1 = __hmul2(v1, s1), v2 = __hmul2(v2, s0), v3 = __hmul2(v3, s1);
    }
    a[0] = detail::as_u32(v0), a[1] = detail::as_u32(v1), a[2] = detail::as_u32(v2), a[3] = detail::as_u32(v3);
  }
};

// ------------------------------------------------------------------------ f16, 8-bit
template <>
struct TiledDecoder<__half, 8> {
  static constexpr uint32_t kOne2 = 0x3C003C00u;
  struct Consts {
    uint32_t z0, z1;  // {1024 + z(g)} x2, {1024 + z(g+8)} x2
    uint32_t s0, s1;
  };
  // Replaces the scale part of c (the zero part stays).
  LOWBIT_DEVICE static void set_scales(Consts& c, uint32_t scale_pair, bool apply_scale) {
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : kOne2;
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : kOne2;
  }
  LOWBIT_DEVICE static Consts make_consts(uint32_t zero_pair, uint32_t scale_pair, bool apply_scale) {
    Consts c;
    c.z0 = ptx::prmt(zero_pair, 0x64646464u, 0x4040u);
    c.z1 = ptx::prmt(zero_pair, 0x64646464u, 0x4141u);
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : 0x3C003C00u;
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : 0x3C003C00u;
    return c;
  }
  template <int kStep, bool kScale, bool kSym = false>
  LOWBIT_DEVICE static void step(const uint4& chunk, const Consts& c, uint32_t (&a)[4]) {
    static_assert(kStep >= 0 && kStep < 2, "8-bit chunks hold 2 k16 steps");
    const uint32_t lo = kStep == 0 ? chunk.x : chunk.z;
    const uint32_t hi = kStep == 0 ? chunk.y : chunk.w;
    uint32_t r[4];
    raw_w8_f16(lo, hi, r);
    const __half2 z0 = detail::as_h2(c.z0), z1 = detail::as_h2(c.z1);
    const __half2 s0 = detail::as_h2(c.s0), s1 = detail::as_h2(c.s1);
    __half2 v0 = __hsub2(detail::as_h2(r[0]), z0), v1 = __hsub2(detail::as_h2(r[1]), z1);
    __half2 v2 = __hsub2(detail::as_h2(r[2]), z0), v3 = __hsub2(detail::as_h2(r[3]), z1);
    if constexpr (kScale) {
      v0 = __hmul2(v0, s0), v1 = __hmul2(v1, s1), v2 = __hmul2(v2, s0), v3 = __hmul2(v3, s1);
    }
    a[0] = detail::as_u32(v0), a[1] = detail::as_u32(v1), a[2] = detail::as_u32(v2), a[3] = detail::as_u32(v3);
  }
};

// ------------------------------------------------------------------------ bf16, 8-bit
template <>
struct TiledDecoder<__nv_bfloat16, 8> {
  static constexpr uint32_t kOne2 = 0x3F803F80u;
  struct Consts {
    float z0, z1;     // 8388608 + z(g), 8388608 + z(g+8)
    uint32_t s0, s1;  // {s} x2 in bf16
  };
  // Replaces the scale part of c (the zero part stays).
  LOWBIT_DEVICE static void set_scales(Consts& c, uint32_t scale_pair, bool apply_scale) {
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : kOne2;
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : kOne2;
  }
  LOWBIT_DEVICE static Consts make_consts(uint32_t zero_pair, uint32_t scale_pair, bool apply_scale) {
    Consts c;
    c.z0 = __uint_as_float(ptx::prmt(zero_pair, kF32Magic, 0x7650u));
    c.z1 = __uint_as_float(ptx::prmt(zero_pair, kF32Magic, 0x7651u));
    c.s0 = apply_scale ? detail::bcast_lo(scale_pair) : 0x3F803F80u;
    c.s1 = apply_scale ? detail::bcast_hi(scale_pair) : 0x3F803F80u;
    return c;
  }
  // Two integer-valued floats -> {bf16(x), bf16(y)}: the upper halves (prmt 0x7632). Exact
  // because |q - z| <= 255 has at most 8 significant bits.
  LOWBIT_DEVICE static uint32_t pack_exact(float x, float y) {
    return ptx::prmt(__float_as_uint(x), __float_as_uint(y), 0x7632u);
  }
  LOWBIT_DEVICE static void word(uint32_t w, const Consts& c, uint32_t& row_g, uint32_t& row_g8) {
    uint32_t f[4];
    raw_w8_f32(w, f);
    row_g = pack_exact(__uint_as_float(f[0]) - c.z0, __uint_as_float(f[1]) - c.z0);
    row_g8 = pack_exact(__uint_as_float(f[2]) - c.z1, __uint_as_float(f[3]) - c.z1);
  }
  // Symmetric weights (z = 128, kSym): m - s = q - 128 from raw_w8_bf16_split, one hsub2 per
  // register, exact.
  LOWBIT_DEVICE static void word_sym(uint32_t w, uint32_t& row_g, uint32_t& row_g8) {
    uint32_t m[2], s[2];
    raw_w8_bf16_split(w, m, s);
    row_g = detail::as_u32(__hsub2(detail::as_b2(m[0]), detail::as_b2(s[0])));
    row_g8 = detail::as_u32(__hsub2(detail::as_b2(m[1]), detail::as_b2(s[1])));
  }
  template <int kStep, bool kScale, bool kSym = false>
  LOWBIT_DEVICE static void step(const uint4& chunk, const Consts& c, uint32_t (&a)[4]) {
    static_assert(kStep >= 0 && kStep < 2, "8-bit chunks hold 2 k16 steps");
    const uint32_t lo = kStep == 0 ? chunk.x : chunk.z;
    const uint32_t hi = kStep == 0 ? chunk.y : chunk.w;
    if constexpr (kSym) {
      word_sym(lo, a[0], a[1]);
      word_sym(hi, a[2], a[3]);
    } else {
      word(lo, c, a[0], a[1]);
      word(hi, c, a[2], a[3]);
    }
    if constexpr (kScale) {
      const __nv_bfloat162 s0 = detail::as_b2(c.s0), s1 = detail::as_b2(c.s1);
      a[0] = detail::as_u32(__hmul2(detail::as_b2(a[0]), s0));
      a[1] = detail::as_u32(__hmul2(detail::as_b2(a[1]), s1));
      a[2] = detail::as_u32(__hmul2(detail::as_b2(a[2]), s0));
      a[3] = detail::as_u32(__hmul2(detail::as_b2(a[3]), s1));
    }
  }
};

}  // namespace lowbit::tiled
