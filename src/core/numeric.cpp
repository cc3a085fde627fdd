// lowbit: fp32 <-> fp16 / bf16 / fp8 codecs, computed on the bits (rules in numeric.hpp).
//
// No floating-point arithmetic happens here: every conversion splits the input into an
// integer significand and a power of two, rounds the significand with integer operations,
// and assembles the output bits. The results therefore do not depend on the host's rounding
// mode, on FTZ/DAZ, or on how the compiler contracts float expressions.
#include "lowbit/numeric.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "lowbit/status.hpp"

namespace lowbit {
namespace {

// A binary floating format with an implicit leading one for normal numbers and IEEE-style
// subnormals (exponent field 0). The exponent range above is open: the caller decides what
// a code past its largest finite code means (inf for fp16/bf16/fp32, saturation for fp8).
struct BinaryFormat {
  int mbits;  // stored mantissa bits
  int bias;   // exponent bias
};
constexpr BinaryFormat kF32Format{23, 127};
constexpr BinaryFormat kF16Format{10, 15};
constexpr BinaryFormat kBF16Format{7, 127};
constexpr BinaryFormat kE4M3Format{3, 7};
constexpr BinaryFormat kE5M2Format{2, 15};

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint64_t double_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
double bits_double(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

int leading_one(uint64_t x) { return 63 - __builtin_clzll(x); }  // x != 0

// Rounds the magnitude sig * 2^e2 (0 < sig < 2^62) to `fmt`, round to nearest, ties to even,
// and returns its magnitude code (exponent field << mbits | mantissa field).
//
// Derivation: at magnitude 2^e <= v < 2^(e+1) the spacing (quantum) of the format is
// 2^q with q = max(e - mbits, 1 - bias - mbits) (the second term is the subnormal spacing).
// The rounded value is m * 2^q with m = rne(v / 2^q), an integer shift of sig. For a normal
// result m in [2^mbits, 2^(mbits+1)] and the code is ((q + mbits + bias) << mbits) + m -
// 2^mbits; for a subnormal result q = 1 - bias - mbits and the code is m itself; both are
// ((q + bias + mbits - 1) << mbits) + m. When m rounds up to 2^(mbits+1) the addition
// carries into the exponent field, which is exactly the next binade's first code.
uint64_t round_magnitude(uint64_t sig, int e2, BinaryFormat fmt) {
  const int e = leading_one(sig) + e2;  // floor(log2(v))
  const int q = std::max(e - fmt.mbits, 1 - fmt.bias - fmt.mbits);
  const int shift = q - e2;  // v / 2^q = sig / 2^shift
  uint64_t m;
  if (shift <= 0) {
    m = sig << -shift;  // exact: fewer significant bits than the format keeps
  } else if (shift >= 63) {
    m = 0;  // v < 2^(62 + e2) <= 2^(q - 1): below half a quantum
  } else {
    const uint64_t half = uint64_t{1} << (shift - 1);
    const uint64_t rem = sig & ((half << 1) - 1);
    m = sig >> shift;
    if (rem > half || (rem == half && (m & 1))) ++m;
  }
  return (static_cast<uint64_t>(q + fmt.bias + fmt.mbits - 1) << fmt.mbits) + m;
}

// fp32 split into sign, class and integer significand.
struct F32Parts {
  uint32_t sign;      // 0 or 1
  bool is_nan;
  bool is_inf;
  bool is_zero;
  uint32_t mantissa;  // the 23 stored bits (NaN payload)
  uint64_t sig;       // finite nonzero: value = sig * 2^e2
  int e2;
};

F32Parts split(float f) {
  const uint32_t u = float_bits(f);
  F32Parts p{};
  p.sign = u >> 31;
  const uint32_t exp = (u >> 23) & 0xFF;
  p.mantissa = u & 0x7FFFFF;
  p.is_nan = exp == 0xFF && p.mantissa != 0;
  p.is_inf = exp == 0xFF && p.mantissa == 0;
  p.is_zero = exp == 0 && p.mantissa == 0;
  p.sig = exp != 0 ? (p.mantissa | 0x800000u) : p.mantissa;
  p.e2 = (exp != 0 ? static_cast<int>(exp) : 1) - 150;  // 127 bias + 23 mantissa bits
  return p;
}

// Finite magnitude code of a format narrower than fp32 (fp16, fp8; not bf16, whose
// subnormals are fp32 subnormals) to fp32 bits. Exact: every such value is an fp32 normal.
uint32_t decode_narrow_finite(uint32_t mag, BinaryFormat fmt) {
  const uint32_t exp = mag >> fmt.mbits;
  uint32_t man = mag & ((1u << fmt.mbits) - 1);
  if (exp == 0) {
    if (man == 0) return 0;
    // Subnormal man * 2^(1 - bias - mbits): make the leading one (bit p) the implicit bit.
    const int p = leading_one(man);
    const int unbiased = 1 - fmt.bias - fmt.mbits + p;
    man = (man - (1u << p)) << (23 - p);
    return (static_cast<uint32_t>(unbiased + 127) << 23) | man;
  }
  return (static_cast<uint32_t>(static_cast<int>(exp) - fmt.bias + 127) << 23) |
         (man << (23 - fmt.mbits));
}

// fp64 -> fp32, round to nearest even on the bits, overflow to inf, NaN kept (quiet).
float f64_to_f32(double d) {
  const uint64_t u = double_bits(d);
  const uint32_t sign = static_cast<uint32_t>(u >> 63) << 31;
  const uint32_t exp = static_cast<uint32_t>(u >> 52) & 0x7FF;
  const uint64_t man = u & ((uint64_t{1} << 52) - 1);
  if (exp == 0x7FF) {
    if (man == 0) return bits_float(sign | 0x7F800000u);
    return bits_float(sign | 0x7FC00000u | static_cast<uint32_t>(man >> 29));
  }
  if (exp == 0 && man == 0) return bits_float(sign);
  const uint64_t sig = exp != 0 ? (man | (uint64_t{1} << 52)) : man;
  const int e2 = (exp != 0 ? static_cast<int>(exp) : 1) - 1075;  // 1023 bias + 52 bits
  const uint64_t code = round_magnitude(sig, e2, kF32Format);
  if (code >= 0x7F800000u) return bits_float(sign | 0x7F800000u);
  return bits_float(sign | static_cast<uint32_t>(code));
}

// fp32 -> fp64, exact on the bits (no DAZ on subnormal inputs).
double f32_to_f64(float f) {
  const uint32_t u = float_bits(f);
  const uint64_t sign = static_cast<uint64_t>(u >> 31) << 63;
  const uint32_t exp = (u >> 23) & 0xFF;
  uint64_t man = u & 0x7FFFFF;
  if (exp == 0xFF) {
    const uint64_t quiet = man != 0 ? (uint64_t{1} << 51) : 0;
    return bits_double(sign | (uint64_t{0x7FF} << 52) | quiet | (man << 29));
  }
  if (exp == 0) {
    if (man == 0) return bits_double(sign);
    const int p = leading_one(man);  // value = man * 2^-149
    const uint64_t e64 = static_cast<uint64_t>(p - 149 + 1023);
    man = (man - (uint64_t{1} << p)) << (52 - p);
    return bits_double(sign | (e64 << 52) | man);
  }
  const uint64_t e64 = exp - 127 + 1023;
  return bits_double(sign | (e64 << 52) | (man << 29));
}

[[noreturn]] void throw_not_float(const char* what, DType t) {
  throw Error(std::string("lowbit: ") + what + ": dtype " + dtype_name(t) +
              " is not a floating type (expected f32, f16, bf16, e4m3, e5m2 or f64)");
}

}  // namespace

// ----------------------------------------------------------------------------- fp16
float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t mag = h & 0x7FFF;
  if (mag >= 0x7C00) {
    const uint32_t man = mag & 0x3FF;
    if (man == 0) return bits_float(sign | 0x7F800000u);
    return bits_float(sign | 0x7FC00000u | (man << 13));  // quiet, payload kept
  }
  return bits_float(sign | decode_narrow_finite(mag, kF16Format));
}

uint16_t f32_to_f16(float f) {
  const F32Parts p = split(f);
  const uint16_t sign = static_cast<uint16_t>(p.sign << 15);
  // NaN: quiet bit set, top 9 payload bits kept (what x86 F16C's vcvtps2ph does).
  if (p.is_nan) return static_cast<uint16_t>(sign | 0x7E00 | (p.mantissa >> 13));
  if (p.is_inf) return static_cast<uint16_t>(sign | 0x7C00);
  if (p.is_zero) return sign;
  const uint64_t code = round_magnitude(p.sig, p.e2, kF16Format);
  if (code >= 0x7C00) return static_cast<uint16_t>(sign | 0x7C00);  // overflow -> inf
  return static_cast<uint16_t>(sign | code);
}

// ----------------------------------------------------------------------------- bf16
float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;  // bf16 is the upper half of fp32
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu) != 0) u |= 0x400000u;  // quiet
  return bits_float(u);
}

uint16_t f32_to_bf16(float f) {
  const F32Parts p = split(f);
  const uint16_t sign = static_cast<uint16_t>(p.sign << 15);
  if (p.is_nan) return static_cast<uint16_t>(sign | 0x7FC0 | (p.mantissa >> 16));
  if (p.is_inf) return static_cast<uint16_t>(sign | 0x7F80);
  if (p.is_zero) return sign;
  const uint64_t code = round_magnitude(p.sig, p.e2, kBF16Format);
  if (code >= 0x7F80) return static_cast<uint16_t>(sign | 0x7F80);  // overflow -> inf
  return static_cast<uint16_t>(sign | code);
}

// ----------------------------------------------------------------------------- fp8 e4m3fn
// No infinities; exponent field 15 holds normal numbers except S.1111.111 (NaN).
float e4m3_to_f32(uint8_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x80) << 24;
  const uint32_t mag = v & 0x7F;
  if (mag == 0x7F) return bits_float(sign | 0x7FC00000u);
  return bits_float(sign | decode_narrow_finite(mag, kE4M3Format));
}

uint8_t f32_to_e4m3(float f) {
  constexpr uint32_t kMaxFinite = 0x7E;  // S.1111.110 = 448
  const F32Parts p = split(f);
  const uint8_t sign = static_cast<uint8_t>(p.sign << 7);
  if (p.is_nan) return static_cast<uint8_t>(sign | 0x7F);
  if (p.is_inf) return static_cast<uint8_t>(sign | kMaxFinite);  // __NV_SATFINITE
  if (p.is_zero) return sign;
  const uint64_t code = round_magnitude(p.sig, p.e2, kE4M3Format);
  return static_cast<uint8_t>(sign | std::min<uint64_t>(code, kMaxFinite));
}

// ----------------------------------------------------------------------------- fp8 e5m2
// IEEE-like: S.11111.00 is inf, S.11111.{01,10,11} are NaN.
float e5m2_to_f32(uint8_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x80) << 24;
  const uint32_t mag = v & 0x7F;
  if (mag >= 0x7C) {
    const uint32_t man = mag & 0x3;
    if (man == 0) return bits_float(sign | 0x7F800000u);
    return bits_float(sign | 0x7FC00000u | (man << 21));
  }
  return bits_float(sign | decode_narrow_finite(mag, kE5M2Format));
}

uint8_t f32_to_e5m2(float f) {
  constexpr uint32_t kMaxFinite = 0x7B;  // S.11110.11 = 57344
  const F32Parts p = split(f);
  const uint8_t sign = static_cast<uint8_t>(p.sign << 7);
  if (p.is_nan) return static_cast<uint8_t>(sign | 0x7E);  // the quiet NaN S.11111.10
  if (p.is_inf) return static_cast<uint8_t>(sign | kMaxFinite);  // __NV_SATFINITE
  if (p.is_zero) return sign;
  const uint64_t code = round_magnitude(p.sig, p.e2, kE5M2Format);
  return static_cast<uint8_t>(sign | std::min<uint64_t>(code, kMaxFinite));
}

// ----------------------------------------------------------------------------- generic
float round_to(DType t, float f) {
  switch (t) {
    case DType::kF32:
    case DType::kF64:  // every fp32 value is an fp64 value
      return f;
    case DType::kF16: return f16_to_f32(f32_to_f16(f));
    case DType::kBF16: return bf16_to_f32(f32_to_bf16(f));
    case DType::kE4M3: return e4m3_to_f32(f32_to_e4m3(f));
    case DType::kE5M2: return e5m2_to_f32(f32_to_e5m2(f));
    default: throw_not_float("round_to", t);
  }
}

float load_as_f32(const void* data, DType t, int64_t i) {
  const char* p = static_cast<const char*>(data) + i * static_cast<int64_t>(dtype_size(t));
  switch (t) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, sizeof f);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, p, sizeof d);
      return f64_to_f32(d);
    }
    case DType::kF16:
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, sizeof h);
      return t == DType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
    case DType::kE4M3: return e4m3_to_f32(static_cast<uint8_t>(*p));
    case DType::kE5M2: return e5m2_to_f32(static_cast<uint8_t>(*p));
    default: throw_not_float("load_as_f32", t);
  }
}

void store_from_f32(void* data, DType t, int64_t i, float f) {
  char* p = static_cast<char*>(data) + i * static_cast<int64_t>(dtype_size(t));
  switch (t) {
    case DType::kF32: std::memcpy(p, &f, sizeof f); return;
    case DType::kF64: {
      const double d = f32_to_f64(f);
      std::memcpy(p, &d, sizeof d);
      return;
    }
    case DType::kF16:
    case DType::kBF16: {
      const uint16_t h = t == DType::kF16 ? f32_to_f16(f) : f32_to_bf16(f);
      std::memcpy(p, &h, sizeof h);
      return;
    }
    case DType::kE4M3: *reinterpret_cast<uint8_t*>(p) = f32_to_e4m3(f); return;
    case DType::kE5M2: *reinterpret_cast<uint8_t*>(p) = f32_to_e5m2(f); return;
    default: throw_not_float("store_from_f32", t);
  }
}

}  // namespace lowbit
