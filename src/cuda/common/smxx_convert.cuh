// Device-side conversions between fp32 and the storage formats, following the host codec
// rules of include/lowbit/numeric.hpp bit for bit (tests/gpu/test_device_codecs.cu checks
// every fp8 code and ~1M fp32 values, ties, overflow and NaN included).
//
// The rules (docs/formats.md, "Numeric codecs"):
//   * fp32 -> narrow rounds to nearest, ties to even (RNE);
//   * fp16 / bf16: overflow goes to +-inf; NaN stays NaN (quiet, sign and top payload bits);
//   * fp8 e4m3 / e5m2: overflow (inf included) saturates to +-448 / +-57344; NaN stays NaN
//     (e4m3 S.1111.111, e5m2 S.11111.10);
//   * narrow -> fp32 is exact.
// The finite (and infinite) cases use the CUDA intrinsics, which implement exactly these
// rules (see each function). NaN is handled before the intrinsic with the host's own bit
// formula, because the intrinsics produce a canonical NaN whose sign and payload differ
// between the hardware and software paths (the sm_80 fp8 path even drops the sign).
//
// smxx_: runs on any architecture this library builds for. On sm_89 and newer the fp8
// conversions are single cvt instructions (cvt.rn.satfinite.e4m3x2.f32, PTX ISA "cvt");
// sm_80 has no fp8 cvt and cuda_fp8.hpp falls back to an exact integer emulation
// (__nv_cvt_double_to_fp8: the float widens to double exactly, then RNE on the bits with
// the same overflow threshold), which gives the same codes. The fp16/bf16 conversions are
// cvt.rn.f16.f32 / cvt.rn.bf16.f32 on sm_80+, without .ftz, so subnormals are kept.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace lowbit::cuda {

// ----------------------------------------------------------------------------- fp32 -> fp8

// fp32 -> e4m3fn code. __NV_SATFINITE with round-to-nearest-even is numeric.hpp's rule:
// |x| > 448 (inf included) becomes +-448 (0x7E / 0xFE) rather than NaN, values in
// (448, 464] round down to 448 (464 is the tie between 448 and the NaN slot; even wins),
// and halfway cases below round to the even code. NaN keeps its sign: S.1111.111.
__device__ __forceinline__ uint8_t f32_to_e4m3(float x) {
  const uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint8_t>(((bits >> 24) & 0x80u) | 0x7Fu);
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}

// fp32 -> e5m2 code. __NV_SATFINITE: |x| >= 61440 (the tie past 57344, which RNE would carry
// into the inf code) and +-inf become +-57344 (0x7B / 0xFB). NaN: the quiet S.11111.10.
__device__ __forceinline__ uint8_t f32_to_e5m2(float x) {
  const uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint8_t>(((bits >> 24) & 0x80u) | 0x7Eu);
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2));
}

// ----------------------------------------------------------------------------- fp32 -> 16 bit

// fp32 -> fp16 bits. __float2half_rn is IEEE round-to-nearest-even: overflow (|x| >= 65520)
// gives +-inf, inf stays inf, tiny values round to subnormals or +-0 with the sign kept.
// NaN: quiet bit set and the top 9 payload bits kept, as the host (and x86 F16C) do.
__device__ __forceinline__ uint16_t f32_to_f16(float x) {
  const uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7E00u | ((bits & 0x7FFFFFu) >> 13));
  return __half_as_ushort(__float2half_rn(x));
}

// fp32 -> bf16 bits. __float2bfloat16_rn is round-to-nearest-even on the upper 16 bits:
// overflow gives +-inf, fp32 subnormals become bf16 subnormals (same exponent range).
// NaN: quiet bit set, the top 6 payload bits kept (host rule).
__device__ __forceinline__ uint16_t f32_to_bf16(float x) {
  const uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u | ((bits & 0x7FFFFFu) >> 16));
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

// ----------------------------------------------------------------------------- narrow -> fp32

// e4m3 -> fp32, exact: every e4m3 value is an fp16 value (3 mantissa bits <= 10, exponents
// 2^-9..2^8 inside fp16's range), and fp16 -> fp32 is exact. NaN (S.1111.111) gives the
// host's quiet NaN with the sign kept.
__device__ __forceinline__ float e4m3_to_f32(uint8_t v) {
  if ((v & 0x7Fu) == 0x7Fu)
    return __uint_as_float((static_cast<uint32_t>(v & 0x80u) << 24) | 0x7FC00000u);
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(v), __NV_E4M3);
  return __half2float(__half(h));
}

// e5m2 -> fp32, exact (e5m2 is the upper byte of fp16). NaN codes keep sign and payload as
// the host does; inf stays inf.
__device__ __forceinline__ float e5m2_to_f32(uint8_t v) {
  if ((v & 0x7Fu) > 0x7Cu)
    return __uint_as_float((static_cast<uint32_t>(v & 0x80u) << 24) | 0x7FC00000u |
                           (static_cast<uint32_t>(v & 0x3u) << 21));
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(v), __NV_E5M2);
  return __half2float(__half(h));
}

// fp16 -> fp32, exact (cvt.f32.f16). NaN: quiet, payload kept (host rule).
__device__ __forceinline__ float f16_to_f32(uint16_t h) {
  if ((h & 0x7FFFu) > 0x7C00u)
    return __uint_as_float((static_cast<uint32_t>(h & 0x8000u) << 16) | 0x7FC00000u |
                           (static_cast<uint32_t>(h & 0x3FFu) << 13));
  return __half2float(__ushort_as_half(h));
}

// bf16 -> fp32: bf16 is the upper half of fp32, so a shift is exact; NaN gets the quiet bit.
__device__ __forceinline__ float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) u |= 0x400000u;
  return __uint_as_float(u);
}

}  // namespace lowbit::cuda
