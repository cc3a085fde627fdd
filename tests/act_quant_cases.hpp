// The cases and inputs of the activation quantizer tests (fp8 and int8 modes), shared by
// tests/cpu/test_act_quant.cpp (the CPU path against an independent recomputation and the
// host quantizers) and tests/gpu/test_fp8_act_quant.cpp (the CUDA kernels against the CPU
// path): one sweep, one generator per code type, one way to run the CPU path.
//
// Decoding here is independent of the library's codecs (decode16, e4m3_values): the CPU test
// holds the library to these values. Rounding to the input dtype goes through store_from_f32.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lowbit/act_quant.hpp"
#include "lowbit/device.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"

namespace lowbit::test {

// The sweep: every fp8 mode x f16/bf16 x these shapes (partial 1x128 groups, padding rows of
// the 1x128 scale layout). The int8 modes have their own inputs (make_int8_values) and sweep.
inline constexpr ActQuantMode kModes[] = {ActQuantMode::kDynamicPerToken, ActQuantMode::kDynamicPerTensor,
                                          ActQuantMode::kStaticPerTensor, ActQuantMode::kDynamicBlock1x128};
// The dynamic int8 modes (quantize_int8()'s rule). kInt8StaticPerTensor has its own cases below.
inline constexpr ActQuantMode kInt8Modes[] = {ActQuantMode::kInt8PerToken, ActQuantMode::kInt8PerTokenZeroPoint};
inline constexpr DType kDTypes[] = {DType::kF16, DType::kBF16};
inline constexpr int64_t kMs[] = {1, 3, 4, 5, 64, 129};
inline constexpr int64_t kKs[] = {16, 112, 128, 144, 4096};

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------
enum class Flavor { kMixed, kTies, kTiny };
inline const char* flavor_name(Flavor f) {
  return f == Flavor::kMixed ? "mixed" : f == Flavor::kTies ? "ties" : "tiny";
}

// The static scale each flavor uses: inexact 1/s, exact 1/s (ties land), tiny.
inline float static_scale_of(Flavor f) {
  return f == Flavor::kMixed ? 0.02f : f == Flavor::kTies ? 1.0f : 1e-6f;
}

// Independent decode of the 16-bit inputs (the library's codec is not used here).
inline float decode16(uint16_t h, DType t) {
  if (t == DType::kBF16) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  const int sign = h >> 15, e = (h >> 10) & 0x1F, mant = h & 0x3FF;
  double v;
  if (e == 0)
    v = std::ldexp(static_cast<double>(mant), -24);
  else if (e == 31)
    v = mant == 0 ? INFINITY : NAN;
  else
    v = std::ldexp(static_cast<double>(1024 + mant), e - 25);
  return static_cast<float>(sign ? -v : v);
}

// Positive finite e4m3 values by code (0..0x7E), from the format definition.
inline const std::array<double, 127>& e4m3_values() {
  static const std::array<double, 127> v = [] {
    std::array<double, 127> out{};
    for (int c = 0; c < 127; ++c) {
      const int e = c >> 3, mant = c & 7;
      out[static_cast<size_t>(c)] = e == 0 ? std::ldexp(mant, -9) : std::ldexp(8 + mant, e - 10);
    }
    return out;
  }();
  return v;
}

// Values where e4m3 rounding decides: every e4m3 value up to 448, every midpoint, and the
// neighbours of each midpoint in the input dtype (all exact in f16 and bf16).
inline std::vector<float> tie_values(DType t) {
  std::vector<float> out;
  const auto& v = e4m3_values();
  for (size_t i = 0; i < v.size(); ++i) {
    out.push_back(static_cast<float>(v[i]));
    if (i + 1 == v.size()) break;
    const float mid = static_cast<float>((v[i] + v[i + 1]) / 2);
    out.push_back(mid);
    uint8_t b[2];
    store_from_f32(b, t, 0, mid);
    uint16_t h;
    std::memcpy(&h, b, 2);
    out.push_back(decode16(static_cast<uint16_t>(h + 1), t));
    if (h > 0) out.push_back(decode16(static_cast<uint16_t>(h - 1), t));
  }
  return out;
}

// Values past 448: saturate in static mode (s = 1).
inline std::vector<float> saturating_values(DType t) {
  std::vector<float> v = {449.0f, 456.0f, 460.0f, 464.0f, 468.0f, 480.0f, 500.0f, 1000.0f, 65504.0f};
  if (t == DType::kBF16) v.push_back(1e30f);
  return v;
}

// One value of a "kind" of the mixed flavor.
inline float kind_value(int kind, DType t, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  float v = 0.0f;
  switch (kind) {
    case 0: v = normal(rng); break;                                            // plain
    case 1: v = normal(rng) * std::pow(10.0f, -4.0f + 8.0f * u(rng)); break;   // wide range
    case 2: v = normal(rng) * 1e-6f; break;                                    // amax < 1e-4
    case 3: v = u(rng) < 0.5f ? 0.0f : -0.0f; break;                           // +-0 only
    case 4: v = normal(rng) * (t == DType::kBF16 ? 1e30f : 1e3f); break;       // large
    default: {                                                                 // subnormals
      std::uniform_int_distribution<int> bits(0, 0xFFFF);
      const int b = bits(rng);
      v = decode16(static_cast<uint16_t>(b & (t == DType::kBF16 ? 0x807F : 0x83FF)), t);
      break;
    }
  }
  if (t == DType::kF16) v = std::clamp(v, -60000.0f, 60000.0f);
  return v;
}

// X (m, k) as fp32 values exactly representable in `t`. Flavors: "mixed" (rows, or 128-column
// groups in 1x128 mode, of plain, wide-range, tiny (amax clamp), +-0, large and subnormal
// values), "ties" (tie_values() with +-448 in every group so the multiplier is exactly 1;
// static mode adds values past 448 that saturate) and "tiny" (all |x| < 1e-4).
inline std::vector<float> make_values(ActQuantMode mode, DType t, int64_t m, int64_t k, Flavor f,
                                      std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(m * k));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const std::vector<float> ties = tie_values(t), sat = saturating_values(t);
  std::uniform_int_distribution<size_t> pick_tie(0, ties.size() - 1), pick_sat(0, sat.size() - 1);
  const int64_t kb = (k + 127) / 128;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) {
      float v = 0.0f;
      switch (f) {
        case Flavor::kMixed: {
          const int kind = static_cast<int>(
              (mode == ActQuantMode::kDynamicBlock1x128 ? r + c / 128 : r) % 6);
          v = kind_value(kind, t, rng);
          break;
        }
        case Flavor::kTies:
          v = ties[pick_tie(rng)];
          if (mode == ActQuantMode::kStaticPerTensor && u(rng) < 0.03f) v = sat[pick_sat(rng)];
          if (u(rng) < 0.5f) v = -v;
          break;
        case Flavor::kTiny:
          v = kind_value(2, t, rng);
          break;
      }
      x[static_cast<size_t>(r * k + c)] = v;
    }
  if (f == Flavor::kTies)  // one +-448 in every 128-column block of every row: inv = 1 everywhere
    for (int64_t r = 0; r < m; ++r)
      for (int64_t b = 0; b < kb; ++b) {
        const int64_t len = std::min<int64_t>(128, k - b * 128);
        x[static_cast<size_t>(r * k + b * 128 + (r * 37 + b * 11) % len)] = (r + b) % 2 ? -448.0f : 448.0f;
      }
  // Round to the input dtype (a no-op for the exact values above).
  std::vector<uint8_t> bytes(x.size() * 2);
  for (size_t i = 0; i < x.size(); ++i) store_from_f32(bytes.data(), t, static_cast<int64_t>(i), x[i]);
  for (size_t i = 0; i < x.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    x[i] = decode16(h, t);
  }
  return x;
}

// X (m, k) dense values to raw dtype bytes with row stride `ld` (>= k); the gap columns get
// `gap` (garbage the quantizer must not read).
inline std::vector<uint8_t> encode_rows(const std::vector<float>& x, DType t, int64_t m, int64_t k,
                                        int64_t ld, float gap) {
  std::vector<uint8_t> out(static_cast<size_t>(m * ld * 2));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < ld; ++c)
      store_from_f32(out.data(), t, r * ld + c, c < k ? x[static_cast<size_t>(r * k + c)] : gap);
  return out;
}

// The row kinds of the int8 inputs (row r has kind r % kInt8RowKinds).
inline constexpr int kInt8RowKinds = 12;
inline const char* int8_row_kind_name(int kind) {
  static const char* const names[kInt8RowKinds] = {
      "normal", "wide-range", "positive-only", "negative-only", "constant", "all-zero",
      "tiny (1e-8 floor)", "subnormal", "large", "ties (s = 1)", "shifted", "huge (hi - lo overflows)"};
  return names[kind % kInt8RowKinds];
}

// X (m, k) for the int8 modes, fp32 values exactly representable in `t`, row r of kind
// r % kInt8RowKinds (int8_row_kind_name). "ties": the row holds 127 and -127 (symmetric) or
// -128 (zero point), so s = 1 (and z = 0), and its other values are n + 0.5, where rne decides
// (exact in f16 and bf16). "tiny": amax and hi - lo below 1e-8 in bf16 (the scale's floor decides); f16 has no
// such values, so its tiny rows are subnormals and zeros. "huge" (bf16): values near +-3e38, so
// hi - lo overflows to +inf (s = +inf, as quantize_int8() does); f16: its largest values.
inline std::vector<float> make_int8_values(ActQuantMode mode, DType t, int64_t m, int64_t k,
                                           std::mt19937& rng) {
  const bool zero_point = mode == ActQuantMode::kInt8PerTokenZeroPoint;
  std::vector<float> x(static_cast<size_t>(m * k));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::uniform_int_distribution<int> bits(0, 0xFFFF), tie(zero_point ? -128 : -127, 126);
  const bool bf16 = t == DType::kBF16;
  for (int64_t r = 0; r < m; ++r) {
    const int kind = static_cast<int>(r % kInt8RowKinds);
    const float constant = normal(rng) * 4.0f, shift = normal(rng) * 8.0f;
    for (int64_t c = 0; c < k; ++c) {
      float v = 0.0f;
      switch (kind) {
        case 0: v = normal(rng); break;
        case 1: v = normal(rng) * std::pow(10.0f, -4.0f + 8.0f * u(rng)); break;
        case 2: v = std::fabs(normal(rng)) + 0.25f; break;
        case 3: v = -3.0f * std::fabs(normal(rng)) - 0.125f; break;
        case 4: v = constant; break;
        case 5: v = u(rng) < 0.5f ? 0.0f : -0.0f; break;
        case 6: v = bf16 ? normal(rng) * 1e-9f : decode16(static_cast<uint16_t>(bits(rng) & 0x8003), t); break;
        case 7: v = decode16(static_cast<uint16_t>(bits(rng) & (bf16 ? 0x807F : 0x83FF)), t); break;
        case 8: v = normal(rng) * (bf16 ? 1e30f : 1e4f); break;
        case 9: v = static_cast<float>(tie(rng)) + 0.5f; break;
        case 10: v = normal(rng) + shift; break;
        default: v = (u(rng) < 0.5f ? -1.0f : 1.0f) * (bf16 ? 3.0e38f : 65504.0f) * (0.9f + 0.1f * u(rng)); break;
      }
      if (!bf16) v = std::clamp(v, -65504.0f, 65504.0f);
      x[static_cast<size_t>(r * k + c)] = v;
    }
    if (kind == 9) {  // s = 1: amax 127 (symmetric), hi - lo = 255 (zero point)
      x[static_cast<size_t>(r * k + (r * 7) % k)] = 127.0f;
      x[static_cast<size_t>(r * k + (r * 7 + 1) % k)] = zero_point ? -128.0f : -127.0f;
    }
    if (kind == 11) {  // both signs present: hi - lo overflows in bf16
      x[static_cast<size_t>(r * k)] = bf16 ? 3.0e38f : 65504.0f;
      x[static_cast<size_t>(r * k + k - 1)] = bf16 ? -3.0e38f : -65504.0f;
    }
  }
  // Round to the input dtype (the generated values are not all exact).
  std::vector<uint8_t> bytes(x.size() * 2);
  for (size_t i = 0; i < x.size(); ++i) store_from_f32(bytes.data(), t, static_cast<int64_t>(i), x[i]);
  for (size_t i = 0; i < x.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    x[i] = decode16(h, t);
  }
  return x;
}

// The int8-static cases: the caller's scales s (1 and 1/16: exact quotients, so the rne ties
// of make_int8_static_values() land; 0.02 and 3.7e-3: inexact; 0.3: inexact, with f16 / bf16
// values whose x / s and x * (1 / s) round to different codes (near_tie_values()); 1e-7 and
// 1e-30: tiny, most quotients clamp; 1e25: huge, most quotients round to 0) and zero points z.
inline constexpr float kInt8StaticScales[] = {1.0f, 0.0625f, 0.02f, 3.7e-3f, 0.3f, 1e-7f, 1e-30f, 1e25f};
inline constexpr int32_t kInt8StaticZeros[] = {-128, -3, 0, 127};

// The row kinds of the int8-static inputs (row r has kind r % kInt8StaticRowKinds).
inline constexpr int kInt8StaticRowKinds = 8;

// The finite values x of dtype `t` with |x / s| < 200 whose quotient lies within 2 fp32 ulps of a
// half-integer n + 0.5 (exact ties included): where rne decides, and where x * (1 / s) can round
// to another code than x / s. Found by trying every 16-bit pattern; empty for many s.
inline std::vector<float> near_tie_values(DType t, float s) {
  std::vector<float> out;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float x = decode16(static_cast<uint16_t>(h), t);
    const double q = static_cast<double>(x) / static_cast<double>(s);
    if (!std::isfinite(q) || std::fabs(q) >= 200.0 || std::fabs(q) < 0.25) continue;
    const double ulp = std::ldexp(1.0, std::ilogb(q) - 23);  // of fp32 at |q|
    if (std::fabs(q - (std::floor(q) + 0.5)) <= 2.0 * ulp) out.push_back(x);
  }
  return out;
}

// X (m, k) for int8-static with scale s, fp32 values exactly representable in `t`, finite: rows
// of quotients x / s in range (about N(0, 40)), past the clamps (N(0, 400)), at rne ties
// ((n + 0.5) * s, exact where s is a power of two, half of them from near_tie_values() when
// it has any), integers times s, +-0 and the dtype's
// subnormals, a wide range of magnitudes (1e-6 .. 1e6), the dtype's large values, and raw
// finite bit patterns. Values s * N that overflow the dtype are clamped to its largest finite.
inline std::vector<float> make_int8_static_values(DType t, int64_t m, int64_t k, float s, std::mt19937& rng) {
  const bool bf16 = t == DType::kBF16;
  const float fmax = bf16 ? 3.0e38f : 65504.0f;
  std::vector<float> x(static_cast<size_t>(m * k));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::uniform_int_distribution<int> bits(0, 0xFFFF), tie(-128, 127), integer(-140, 140);
  const std::vector<float> near_ties = m > 2 ? near_tie_values(t, s) : std::vector<float>{};
  std::uniform_int_distribution<size_t> pick_near(0, near_ties.empty() ? 0 : near_ties.size() - 1);
  for (int64_t r = 0; r < m; ++r) {
    const int kind = static_cast<int>(r % kInt8StaticRowKinds);
    for (int64_t c = 0; c < k; ++c) {
      double v = 0.0;
      switch (kind) {
        case 0: v = static_cast<double>(s) * normal(rng) * 40.0; break;
        case 1: v = static_cast<double>(s) * normal(rng) * 400.0; break;
        case 2:
          v = !near_ties.empty() && u(rng) < 0.5f ? near_ties[pick_near(rng)] : static_cast<double>(s) * (tie(rng) + 0.5);
          break;
        case 3: v = static_cast<double>(s) * integer(rng); break;
        case 4: v = decode16(static_cast<uint16_t>(bits(rng) & (bf16 ? 0x807F : 0x83FF)), t); break;
        case 5: v = normal(rng) * std::pow(10.0, -6.0 + 12.0 * u(rng)); break;
        case 6: v = normal(rng) * (bf16 ? 1e30 : 3e4); break;
        default: {
          float f = decode16(static_cast<uint16_t>(bits(rng)), t);
          while (!std::isfinite(f)) f = decode16(static_cast<uint16_t>(bits(rng)), t);
          v = f;
          break;
        }
      }
      x[static_cast<size_t>(r * k + c)] = static_cast<float>(std::clamp<double>(v, -fmax, fmax));
    }
  }
  // Round to the input dtype.
  std::vector<uint8_t> bytes(x.size() * 2);
  for (size_t i = 0; i < x.size(); ++i) store_from_f32(bytes.data(), t, static_cast<int64_t>(i), x[i]);
  for (size_t i = 0; i < x.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    x[i] = decode16(h, t);
  }
  return x;
}

// ---------------------------------------------------------------------------------------
// Running the CPU path
// ---------------------------------------------------------------------------------------
inline ActQuantDesc make_desc(ActQuantMode mode, DType t, int64_t m, int64_t k, int64_t ld = 0) {
  ActQuantDesc d;
  d.m = m;
  d.k = k;
  d.dtype = t;
  d.mode = mode;
  d.x_row_stride = ld;
  return d;
}

// kInt8StaticPerTensor, with or without the static zero point.
inline ActQuantDesc make_int8_static_desc(DType t, int64_t m, int64_t k, bool zero_point, int64_t ld = 0) {
  ActQuantDesc d = make_desc(ActQuantMode::kInt8StaticPerTensor, t, m, k, ld);
  d.int8_zero_point = zero_point;
  return d;
}

// Whether ActQuant::run writes zero points for `d` (ActQuantArgs::zeros).
inline bool writes_zeros(const ActQuantDesc& d) {
  return d.mode == ActQuantMode::kInt8PerTokenZeroPoint ||
         (d.mode == ActQuantMode::kInt8StaticPerTensor && d.int8_zero_point);
}

// The codes (m, k) (e4m3 or int8, one byte each), the scales and, int8 with zero point, the
// zero points of one quantization.
struct Quantized {
  std::vector<uint8_t> q;
  std::vector<float> scales;
  std::vector<int32_t> zeros;  // writes_zeros() only
};

// Poison of the int32 zero points: 0x5A5A5A5A, outside every zero point's range [-128, 127].
inline constexpr uint8_t kZerosPoisonByte = 0x5A;
inline constexpr int32_t kZerosPoison = 0x5A5A5A5A;

// ActQuant::run on Device::cpu(). Outputs poisoned first (codes `code_poison`: 0xFF is the
// e4m3 code of -NaN, never produced, but a valid int8 code, which is why the int8 tests run
// twice with two poisons; NaN scales; zero points kZerosPoison), so an element left unwritten
// shows. `static_z`: int8-static's zero point (read when d.int8_zero_point).
inline Quantized run_cpu(const ActQuantDesc& d, const std::vector<uint8_t>& x, float static_s,
                         uint8_t code_poison = 0xFF, int32_t static_z = 0) {
  ActQuant op(d, Device::cpu());
  EXPECT_TRUE(op.can_implement().ok()) << op.can_implement().message();
  Quantized out;
  out.q.assign(static_cast<size_t>(d.m * d.k), code_poison);
  out.scales.assign(static_cast<size_t>(op.scales_count()), std::numeric_limits<float>::quiet_NaN());
  if (writes_zeros(d)) out.zeros.assign(static_cast<size_t>(d.m), kZerosPoison);
  ActQuantArgs a;
  a.x = x.data();
  a.static_scale = &static_s;
  if (d.mode == ActQuantMode::kInt8StaticPerTensor && d.int8_zero_point) a.static_zero_point = &static_z;
  a.q = out.q.data();
  a.scales = out.scales.data();
  a.zeros = out.zeros.empty() ? nullptr : out.zeros.data();
  const Status s = op.run(a, nullptr);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// The host quantizer's int8 result (quantize_int8(), finite input) as a Quantized.
inline Quantized int8_host_quantizer(ActQuantMode mode, const std::vector<float>& x, int64_t m, int64_t k) {
  const Int8Tensor t = quantize_int8(x.data(), m, k, mode == ActQuantMode::kInt8PerTokenZeroPoint);
  Quantized out;
  out.q.resize(t.codes.size());
  std::memcpy(out.q.data(), t.codes.data(), t.codes.size());
  out.scales = t.scales;
  out.zeros = t.zeros;
  return out;
}

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline std::string case_name(const ActQuantDesc& d, const char* flavor, uint32_t seed) {
  return d.describe() + " flavor=" + flavor + " seed=" + std::to_string(seed);
}
inline std::string case_name(const ActQuantDesc& d, Flavor f, uint32_t seed) {
  return case_name(d, flavor_name(f), seed);
}

}  // namespace lowbit::test
