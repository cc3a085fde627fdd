// Tests of the numeric codecs (include/lowbit/numeric.hpp) against independent oracles:
// a decoder written here with ldexp, brute-force nearest-even searches in double, and the
// compiler's _Float16 conversions.
#include <gtest/gtest.h>

#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace {

using namespace lowbit;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// One storage format, described by its bit fields, with the library's codec for it.
struct Fmt {
  const char* name;
  int ebits, mbits, bias;
  bool fn;            // "finite" e4m3fn: no infinities, only S.1111.111 is NaN
  bool saturates;     // fp8: overflow -> largest finite; fp16/bf16: overflow -> inf
  float (*decode)(uint32_t);
  uint32_t (*encode)(float);
  int total_bits() const { return 1 + ebits + mbits; }
  uint32_t sign_bit() const { return 1u << (ebits + mbits); }
  uint32_t code_count() const { return 1u << total_bits(); }
};

const Fmt kE4M3{"e4m3", 4, 3, 7, true, true,
                [](uint32_t c) { return e4m3_to_f32(static_cast<uint8_t>(c)); },
                [](float f) { return static_cast<uint32_t>(f32_to_e4m3(f)); }};
const Fmt kE5M2{"e5m2", 5, 2, 15, false, true,
                [](uint32_t c) { return e5m2_to_f32(static_cast<uint8_t>(c)); },
                [](float f) { return static_cast<uint32_t>(f32_to_e5m2(f)); }};
const Fmt kF16{"f16", 5, 10, 15, false, false,
               [](uint32_t c) { return f16_to_f32(static_cast<uint16_t>(c)); },
               [](float f) { return static_cast<uint32_t>(f32_to_f16(f)); }};
const Fmt kBF16{"bf16", 8, 7, 127, false, false,
                [](uint32_t c) { return bf16_to_f32(static_cast<uint16_t>(c)); },
                [](float f) { return static_cast<uint32_t>(f32_to_bf16(f)); }};

// The independent decoder: the value of a code from its fields, with ldexp in double.
double ref_decode(const Fmt& f, uint32_t code) {
  const bool neg = (code & f.sign_bit()) != 0;
  const uint32_t e = (code >> f.mbits) & ((1u << f.ebits) - 1);
  const uint32_t m = code & ((1u << f.mbits) - 1);
  const uint32_t emax = (1u << f.ebits) - 1, mmax = (1u << f.mbits) - 1;
  double v;
  if (f.fn && e == emax && m == mmax) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (!f.fn && e == emax) {
    v = m != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
  } else {
    v = std::ldexp(static_cast<double>((1u << f.mbits) + m), static_cast<int>(e) - f.bias - f.mbits);
  }
  return neg ? -v : v;
}

bool ref_is_nan(const Fmt& f, uint32_t code) { return std::isnan(ref_decode(f, code)); }

// Positive finite codes in increasing value order (codes of a sign-magnitude format are
// monotonic in value, a fact this list does not rely on: it is checked below).
std::vector<uint32_t> positive_finite_codes(const Fmt& f) {
  std::vector<uint32_t> out;
  for (uint32_t c = 0; c < f.sign_bit(); ++c)
    if (std::isfinite(ref_decode(f, c))) out.push_back(c);
  return out;
}

double max_finite(const Fmt& f) { return ref_decode(f, positive_finite_codes(f).back()); }

// Brute-force nearest-even oracle in double: the nearest finite positive value, ties to the
// even code; values past the largest finite value saturate (fp8) or go to inf (IEEE rule:
// a magnitude >= max + half a step of the top binade is inf).
uint32_t ref_encode(const Fmt& f, float x) {
  const uint32_t sign = std::signbit(x) ? f.sign_bit() : 0;
  if (std::isnan(x)) return 0xFFFFFFFFu;  // handled by the callers
  const double a = std::fabs(static_cast<double>(x));
  const std::vector<uint32_t>& codes = [&]() -> const std::vector<uint32_t>& {
    static std::vector<uint32_t> cache[4];
    const int slot = &f == &kE4M3 ? 0 : &f == &kE5M2 ? 1 : &f == &kF16 ? 2 : 3;
    if (cache[slot].empty()) cache[slot] = positive_finite_codes(f);
    return cache[slot];
  }();
  const double top = ref_decode(f, codes.back());
  const double top_step = top - ref_decode(f, codes[codes.size() - 2]);
  if (!f.saturates && a >= top + top_step / 2) return sign | (((1u << f.ebits) - 1) << f.mbits);
  if (a >= top) return sign | codes.back();
  // Binary search for the neighbours lo <= a < hi.
  size_t lo = 0, hi = codes.size() - 1;
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    if (ref_decode(f, codes[mid]) <= a) lo = mid; else hi = mid;
  }
  const double dlo = a - ref_decode(f, codes[lo]), dhi = ref_decode(f, codes[hi]) - a;
  uint32_t pick;
  if (dlo < dhi) pick = codes[lo];
  else if (dhi < dlo) pick = codes[hi];
  else pick = (codes[lo] & 1) == 0 ? codes[lo] : codes[hi];
  return sign | pick;
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// Every code decodes to the independent formula's value and re-encodes to itself.
void check_all_codes(const Fmt& f) {
  for (uint32_t c = 0; c < f.code_count(); ++c) {
    const float v = f.decode(c);
    const double ref = ref_decode(f, c);
    const bool neg = (c & f.sign_bit()) != 0;
    SCOPED_TRACE(std::string(f.name) + " code " + hex(c));
    ASSERT_EQ(std::signbit(v), neg);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(v));
      const uint32_t back = f.encode(v);
      ASSERT_TRUE(ref_is_nan(f, back)) << "re-encoded to " << hex(back);
      ASSERT_EQ(back & f.sign_bit(), c & f.sign_bit());
      continue;
    }
    ASSERT_EQ(static_cast<double>(v), ref);
    const uint32_t back = f.encode(v);
    if (std::isinf(ref) && f.saturates) {
      // e5m2 inf is a valid code, but the encoder saturates it (__NV_SATFINITE).
      ASSERT_EQ(static_cast<double>(f.decode(back)), neg ? -max_finite(f) : max_finite(f));
    } else {
      ASSERT_EQ(back, c) << "value " << ref;
    }
  }
}

// For each adjacent pair of representable values, the exact midpoint goes to the even code
// and the fp32 neighbours of the midpoint go to the nearer value. Both signs.
void check_ties(const Fmt& f) {
  const std::vector<uint32_t> codes = positive_finite_codes(f);
  for (size_t i = 0; i + 1 < codes.size(); ++i) {
    const double lo = ref_decode(f, codes[i]), hi = ref_decode(f, codes[i + 1]);
    ASSERT_LT(lo, hi) << "codes not monotonic at " << hex(codes[i]);
    const double mid = (lo + hi) / 2;
    const float midf = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(midf), mid) << "midpoint not representable in fp32";
    const uint32_t even = (codes[i] & 1) == 0 ? codes[i] : codes[i + 1];
    for (int s = 0; s < 2; ++s) {
      const float sg = s ? -1.0f : 1.0f;
      const uint32_t sb = s ? f.sign_bit() : 0;
      SCOPED_TRACE(std::string(f.name) + " between " + hex(codes[i]) + " and " + hex(codes[i + 1]) +
                   (s ? " (negative)" : ""));
      EXPECT_EQ(f.encode(sg * midf), sb | even);
      EXPECT_EQ(f.encode(sg * std::nextafter(midf, 0.0f)), sb | codes[i]);
      EXPECT_EQ(f.encode(sg * std::nextafter(midf, FLT_MAX)), sb | codes[i + 1]);
      EXPECT_EQ(f.encode(sg * static_cast<float>(lo)), sb | codes[i]);
    }
  }
}

// Random fp32 inputs (any bit pattern, and values in the format's range) vs the oracle.
void check_random_against_oracle(const Fmt& f, uint32_t seed, int count) {
  std::mt19937 rng(seed);
  SCOPED_TRACE(std::string(f.name) + " seed " + std::to_string(seed));
  const double top = max_finite(f);
  const int top_exp = std::ilogb(top);
  const int low_exp = 1 - f.bias - f.mbits - 2;
  std::uniform_int_distribution<int> exp_dist(low_exp, top_exp + 2);
  std::uniform_real_distribution<float> frac(1.0f, 2.0f);
  for (int i = 0; i < count; ++i) {
    float x;
    if (i % 2 == 0) {
      x = float_of(rng());
    } else {
      x = std::ldexp(frac(rng), exp_dist(rng));
      if (rng() & 1) x = -x;
    }
    const uint32_t got = f.encode(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(ref_is_nan(f, got)) << "NaN " << hex(bits_of(x)) << " -> " << hex(got);
      ASSERT_EQ((got & f.sign_bit()) != 0, std::signbit(x));
      continue;
    }
    ASSERT_EQ(got, ref_encode(f, x)) << "x = " << x << " (" << hex(bits_of(x)) << ")";
  }
}

int g_seed_counter = 1000;  // fresh data per case: each check draws the next seed

// ---------------------------------------------------------------------------------------
TEST(Numeric, e4m3_all_256_codes_decode_and_roundtrip) { check_all_codes(kE4M3); }
TEST(Numeric, e5m2_all_256_codes_decode_and_roundtrip) { check_all_codes(kE5M2); }
TEST(Numeric, f16_all_65536_codes_decode_and_roundtrip) { check_all_codes(kF16); }
TEST(Numeric, bf16_all_65536_codes_decode_and_roundtrip) { check_all_codes(kBF16); }

TEST(Numeric, e4m3_ties_to_even_and_midpoint_neighbours) { check_ties(kE4M3); }
TEST(Numeric, e5m2_ties_to_even_and_midpoint_neighbours) { check_ties(kE5M2); }
TEST(Numeric, f16_ties_to_even_and_midpoint_neighbours) { check_ties(kF16); }
TEST(Numeric, bf16_ties_to_even_and_midpoint_neighbours) { check_ties(kBF16); }

TEST(Numeric, e4m3_random_fp32_vs_nearest_even_search) {
  check_random_against_oracle(kE4M3, g_seed_counter++, 200000);
}
TEST(Numeric, e5m2_random_fp32_vs_nearest_even_search) {
  check_random_against_oracle(kE5M2, g_seed_counter++, 200000);
}
TEST(Numeric, bf16_random_fp32_vs_nearest_even_search) {
  check_random_against_oracle(kBF16, g_seed_counter++, 200000);
}
TEST(Numeric, f16_random_fp32_vs_nearest_even_search) {
  check_random_against_oracle(kF16, g_seed_counter++, 200000);
}

#if defined(__FLT16_MAX__)
// The compiler's binary16 (GCC's libgcc soft-float or F16C) as a second fp16 oracle.
uint16_t compiler_f16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

TEST(Numeric, f16_matches_compiler_Float16_conversions) {
  for (uint32_t c = 0; c < 65536; ++c) {
    _Float16 h;
    const uint16_t c16 = static_cast<uint16_t>(c);
    std::memcpy(&h, &c16, 2);
    const float want = static_cast<float>(h);
    const float got = f16_to_f32(c16);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << hex(c);
    } else {
      ASSERT_EQ(bits_of(got), bits_of(want)) << hex(c);
    }
  }
  const uint32_t seed = static_cast<uint32_t>(g_seed_counter++);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> exp_dist(-27, 17);
  std::uniform_real_distribution<float> frac(1.0f, 2.0f);
  for (int i = 0; i < 400000; ++i) {
    const float x = i % 2 ? float_of(rng()) : std::ldexp(frac(rng), exp_dist(rng));
    const uint16_t want = compiler_f16(x);
    const uint16_t got = f32_to_f16(x);
    if (std::isnan(x)) {
      ASSERT_TRUE((got & 0x7C00) == 0x7C00 && (got & 0x3FF) != 0) << "seed " << seed;
      ASSERT_EQ(got & 0x8000, want & 0x8000) << "seed " << seed;
    } else {
      ASSERT_EQ(got, want) << "x = " << x << " (" << hex(bits_of(x)) << "), seed " << seed;
    }
  }
}
#endif

// ---------------------------------------------------------------------------------------
TEST(Numeric, e4m3_saturates_at_448) {
  EXPECT_EQ(f32_to_e4m3(448.0f), 0x7E);
  EXPECT_EQ(f32_to_e4m3(432.0f), 0x7E);    // tie 416 | 448: 448 has the even mantissa
  EXPECT_EQ(f32_to_e4m3(431.99f), 0x7D);   // 416
  EXPECT_EQ(f32_to_e4m3(449.0f), 0x7E);
  EXPECT_EQ(f32_to_e4m3(463.99f), 0x7E);
  EXPECT_EQ(f32_to_e4m3(464.0f), 0x7E);    // the RNE overflow boundary: still 448
  EXPECT_EQ(f32_to_e4m3(464.01f), 0x7E);
  EXPECT_EQ(f32_to_e4m3(1e30f), 0x7E);
  EXPECT_EQ(f32_to_e4m3(FLT_MAX), 0x7E);
  EXPECT_EQ(f32_to_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(f32_to_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(f32_to_e4m3(-500.0f), 0xFE);
  EXPECT_EQ(e4m3_to_f32(0x7E), kE4M3Max);
  EXPECT_EQ(e4m3_to_f32(0xFE), -kE4M3Max);
}

TEST(Numeric, e5m2_saturates_at_57344) {
  EXPECT_EQ(f32_to_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(f32_to_e5m2(53248.0f), 0x7A);  // tie 49152 (.10, even) | 57344 (.11) -> 49152
  EXPECT_EQ(f32_to_e5m2(61439.0f), 0x7B);
  EXPECT_EQ(f32_to_e5m2(61440.0f), 0x7B);  // RNE boundary to "65536": saturates
  EXPECT_EQ(f32_to_e5m2(70000.0f), 0x7B);
  EXPECT_EQ(f32_to_e5m2(1e30f), 0x7B);
  EXPECT_EQ(f32_to_e5m2(std::numeric_limits<float>::infinity()), 0x7B);
  EXPECT_EQ(f32_to_e5m2(-std::numeric_limits<float>::infinity()), 0xFB);
  EXPECT_EQ(e5m2_to_f32(0x7B), kE5M2Max);
  EXPECT_TRUE(std::isinf(e5m2_to_f32(0x7C)));
  EXPECT_TRUE(std::isinf(e5m2_to_f32(0xFC)) && e5m2_to_f32(0xFC) < 0);
}

TEST(Numeric, f16_overflows_to_inf_at_65520) {
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);
  EXPECT_EQ(f32_to_f16(-65520.0f), 0xFC00);
  EXPECT_EQ(f32_to_f16(1e10f), 0x7C00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f16_to_f32(0x7BFF), kF16Max);
}

TEST(Numeric, bf16_overflows_to_inf_past_largest_finite) {
  EXPECT_EQ(f32_to_bf16(float_of(0x7F7F7FFF)), 0x7F7F);
  EXPECT_EQ(f32_to_bf16(float_of(0x7F7F8000)), 0x7F80);  // tie, 0x7F7F is odd -> "2^128" = inf
  EXPECT_EQ(f32_to_bf16(FLT_MAX), 0x7F80);
  EXPECT_EQ(f32_to_bf16(-FLT_MAX), 0xFF80);
  EXPECT_EQ(f32_to_bf16(float_of(0x7F7E8000)), 0x7F7E);  // tie, 0x7F7E even
}

TEST(Numeric, subnormals_both_directions) {
  // e4m3: smallest subnormal 2^-9, largest 7 * 2^-9, smallest normal 2^-6.
  EXPECT_EQ(e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_f32(0x07), std::ldexp(7.0f, -9));
  EXPECT_EQ(e4m3_to_f32(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(f32_to_e4m3(std::ldexp(1.0f, -10)), 0x00);              // tie with 0 -> 0 (even)
  EXPECT_EQ(f32_to_e4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(f32_to_e4m3(std::ldexp(3.0f, -10)), 0x02);              // tie 1 | 2 -> 2
  EXPECT_EQ(f32_to_e4m3(std::ldexp(15.0f, -10)), 0x08);             // tie 7 | 8 -> 8 (normal)
  EXPECT_EQ(f32_to_e4m3(FLT_TRUE_MIN), 0x00);
  EXPECT_EQ(f32_to_e4m3(-FLT_TRUE_MIN), 0x80);
  // e5m2: smallest subnormal 2^-16.
  EXPECT_EQ(e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f32_to_e5m2(std::ldexp(1.0f, -17)), 0x00);
  EXPECT_EQ(f32_to_e5m2(std::ldexp(3.0f, -17)), 0x02);
  // f16: smallest subnormal 2^-24, largest 1023 * 2^-24.
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(2047.0f, -25)), 0x0400);  // tie 0x3FF | 0x400 -> 0x400
  // bf16 subnormals are fp32 subnormals.
  EXPECT_EQ(bf16_to_f32(0x0001), float_of(0x00010000));
  EXPECT_EQ(f32_to_bf16(float_of(0x00008000)), 0x0000);  // tie with 0
  EXPECT_EQ(f32_to_bf16(float_of(0x00008001)), 0x0001);
  EXPECT_EQ(f32_to_bf16(float_of(0x00018000)), 0x0002);  // tie 1 | 2
  EXPECT_EQ(f32_to_bf16(float_of(0x007FFFFF)), 0x0080);  // rounds up to the smallest normal
  EXPECT_EQ(f32_to_bf16(FLT_TRUE_MIN), 0x0000);
}

TEST(Numeric, signed_zero_kept) {
  EXPECT_EQ(f32_to_e4m3(0.0f), 0x00);
  EXPECT_EQ(f32_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(f32_to_e5m2(-0.0f), 0x80);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_e4m3(-1e-30f), 0x80);  // underflow keeps the sign
  EXPECT_EQ(f32_to_f16(-1e-30f), 0x8000);
  EXPECT_EQ(bits_of(e4m3_to_f32(0x80)), 0x80000000u);
  EXPECT_EQ(bits_of(e5m2_to_f32(0x80)), 0x80000000u);
  EXPECT_EQ(bits_of(f16_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(bits_of(bf16_to_f32(0x8000)), 0x80000000u);
}

TEST(Numeric, nan_preserved_with_sign) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const float snan = std::numeric_limits<float>::signaling_NaN();
  for (float nan : {qnan, -qnan, snan, -snan, float_of(0x7F800001), float_of(0xFFC12345)}) {
    const bool neg = std::signbit(nan);
    SCOPED_TRACE(hex(bits_of(nan)));
    EXPECT_EQ(f32_to_e4m3(nan), neg ? 0xFF : 0x7F);
    EXPECT_EQ(f32_to_e5m2(nan), neg ? 0xFE : 0x7E);
    const uint16_t h = f32_to_f16(nan);
    EXPECT_EQ(h & 0xFE00, neg ? 0xFE00 : 0x7E00);  // quiet NaN, sign kept
    const uint16_t b = f32_to_bf16(nan);
    EXPECT_EQ(b & 0xFFC0, neg ? 0xFFC0 : 0x7FC0);
    // Back to fp32: NaN with the sign.
    for (float back : {e4m3_to_f32(f32_to_e4m3(nan)), e5m2_to_f32(f32_to_e5m2(nan)),
                       f16_to_f32(h), bf16_to_f32(b)}) {
      EXPECT_TRUE(std::isnan(back));
      EXPECT_EQ(std::signbit(back), neg);
    }
  }
  // Quiet-NaN payload bits that fit are kept by the 16-bit formats.
  EXPECT_EQ(f32_to_f16(float_of(0x7FC12345)), 0x7E00 | (0x412345 >> 13));
  EXPECT_EQ(f32_to_bf16(float_of(0x7FC12345)), 0x7FC1);
}

// ---------------------------------------------------------------------------------------
TEST(Numeric, round_to_every_float_dtype) {
  EXPECT_EQ(round_to(DType::kF32, 0.1f), 0.1f);
  EXPECT_EQ(round_to(DType::kF64, 0.1f), 0.1f);
  EXPECT_EQ(round_to(DType::kF16, 0.1f), f16_to_f32(f32_to_f16(0.1f)));
  EXPECT_EQ(round_to(DType::kF16, 0.1f), 0.0999755859375f);
  EXPECT_EQ(round_to(DType::kBF16, 0.1f), 0.10009765625f);
  EXPECT_EQ(round_to(DType::kE4M3, 0.1f), 0.1015625f);
  EXPECT_EQ(round_to(DType::kE5M2, 0.1f), 0.09375f);
  EXPECT_EQ(round_to(DType::kE4M3, 1000.0f), 448.0f);
  EXPECT_TRUE(std::isinf(round_to(DType::kF16, 1e6f)));
}

TEST(Numeric, non_float_dtypes_throw_naming_the_dtype) {
  float buf[4] = {};
  for (DType t : {DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kU32,
                  DType::kI64, DType::kU64, DType::kBool}) {
    const std::string name = dtype_name(t);
    SCOPED_TRACE(name);
    try {
      (void)round_to(t, 1.0f);
      ADD_FAILURE() << "round_to did not throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dtype " + name), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("lowbit: ", 0), 0u) << e.what();
    }
    EXPECT_THROW((void)load_as_f32(buf, t, 0), Error);
    EXPECT_THROW(store_from_f32(buf, t, 0, 1.0f), Error);
  }
}

TEST(Numeric, load_and_store_every_float_dtype) {
  const float values[] = {0.0f, -0.0f, 1.0f, -2.5f, 0.1f, 448.0f, 1e-3f, 3.0e4f, FLT_TRUE_MIN};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kE4M3, DType::kE5M2, DType::kF64}) {
    SCOPED_TRACE(dtype_name(t));
    std::vector<unsigned char> buf(8 * 16, 0xCD);
    for (int i = 0; i < 9; ++i) store_from_f32(buf.data(), t, i, values[i]);
    for (int i = 0; i < 9; ++i) {
      const float got = load_as_f32(buf.data(), t, i);
      EXPECT_EQ(bits_of(got), bits_of(round_to(t, values[i]))) << values[i];
    }
  }
  // Stored bytes are the codecs' codes.
  uint16_t h = 0;
  store_from_f32(&h, DType::kF16, 0, 1.0f);
  EXPECT_EQ(h, 0x3C00);
  store_from_f32(&h, DType::kBF16, 0, 1.0f);
  EXPECT_EQ(h, 0x3F80);
  uint8_t b[2] = {};
  store_from_f32(b, DType::kE4M3, 1, -448.0f);
  EXPECT_EQ(b[1], 0xFE);
  double d[2] = {};
  store_from_f32(d, DType::kF64, 1, FLT_TRUE_MIN);
  EXPECT_EQ(d[1], std::ldexp(1.0, -149));
}

TEST(Numeric, f64_load_rounds_to_nearest_even) {
  double d[12] = {1.0 + std::ldexp(1.0, -24),                        // tie -> 1.0 (even)
                  1.0 + std::ldexp(3.0, -24),                        // tie -> up (even)
                  1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40), // above tie -> up
                  1e300, -1e300,                                     // overflow -> inf
                  std::ldexp(1.0, -150),                             // tie with 0 -> 0
                  std::ldexp(1.0, -150) * 1.0000001,                 // -> FLT_TRUE_MIN
                  std::ldexp(1.0, -1074),                            // fp64 subnormal -> 0
                  -std::numeric_limits<double>::quiet_NaN(),
                  static_cast<double>(FLT_MAX) * (1 + std::ldexp(1.0, -25)),  // below the tie
                  0.1, -0.0};
  for (int i = 0; i < 12; ++i) {
    const float got = load_as_f32(d, DType::kF64, i);
    const float want = static_cast<float>(d[i]);  // the host conversion, default rounding
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got));
      EXPECT_EQ(std::signbit(got), std::signbit(want));
    } else {
      EXPECT_EQ(bits_of(got), bits_of(want)) << "index " << i << " value " << d[i];
    }
  }
  const uint32_t seed = static_cast<uint32_t>(g_seed_counter++);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exp_dist(-160, 130);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t r = rng();
    double x;
    if (i % 2) {
      std::memcpy(&x, &r, 8);
    } else {
      x = std::ldexp(1.0 + static_cast<double>(r >> 12) * std::ldexp(1.0, -52), exp_dist(rng));
    }
    if (std::isnan(x)) continue;
    ASSERT_EQ(bits_of(load_as_f32(&x, DType::kF64, 0)), bits_of(static_cast<float>(x)))
        << "x = " << x << ", seed " << seed;
  }
}

#if defined(__SSE2__)
// The codecs are computed on the bits: an upward rounding mode and FTZ/DAZ change nothing.
TEST(Numeric, independent_of_rounding_mode_and_ftz_daz) {
  std::mt19937 rng(static_cast<uint32_t>(g_seed_counter++));
  std::vector<float> inputs;
  for (uint32_t c = 0; c < 65536; ++c) inputs.push_back(f16_to_f32(static_cast<uint16_t>(c)));
  for (uint32_t c = 0; c < 65536; ++c) inputs.push_back(bf16_to_f32(static_cast<uint16_t>(c)));
  for (int i = 0; i < 100000; ++i) inputs.push_back(float_of(rng()));
  for (int i = 0; i < 1000; ++i) inputs.push_back(float_of(rng() & 0x807FFFFF));  // subnormals

  auto run_all = [&](std::vector<uint32_t>& out) {
    out.clear();
    for (float x : inputs) {
      out.push_back(f32_to_f16(x));
      out.push_back(f32_to_bf16(x));
      out.push_back(f32_to_e4m3(x));
      out.push_back(f32_to_e5m2(x));
      out.push_back(bits_of(round_to(DType::kF16, x)));
      double d;
      store_from_f32(&d, DType::kF64, 0, x);
      out.push_back(bits_of(load_as_f32(&d, DType::kF64, 0)));
    }
    for (uint32_t c = 0; c < 65536; ++c) {
      out.push_back(bits_of(f16_to_f32(static_cast<uint16_t>(c))));
      out.push_back(bits_of(bf16_to_f32(static_cast<uint16_t>(c))));
    }
    for (uint32_t c = 0; c < 256; ++c) {
      out.push_back(bits_of(e4m3_to_f32(static_cast<uint8_t>(c))));
      out.push_back(bits_of(e5m2_to_f32(static_cast<uint8_t>(c))));
    }
  };
  std::vector<uint32_t> base, odd;
  run_all(base);
  const unsigned csr = _mm_getcsr();
  const int round = std::fegetround();
  std::fesetround(FE_UPWARD);
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
  run_all(odd);
  std::fesetround(FE_TOWARDZERO);
  std::vector<uint32_t> odd2;
  run_all(odd2);
  _mm_setcsr(csr);
  std::fesetround(round);
  ASSERT_EQ(base.size(), odd.size());
  for (size_t i = 0; i < base.size(); ++i) {
    ASSERT_EQ(base[i], odd[i]) << "result " << i << " differs under FE_UPWARD + FTZ/DAZ";
    ASSERT_EQ(base[i], odd2[i]) << "result " << i << " differs under FE_TOWARDZERO + FTZ/DAZ";
  }
}
#endif

}  // namespace
