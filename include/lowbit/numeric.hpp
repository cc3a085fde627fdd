// lowbit: exact conversions between fp32 and the storage formats (host side).
//
// Rules (docs/formats.md, "Numeric codecs"):
//  * fp32 -> narrow: round to nearest, ties to even (RNE), computed on the bits, so the
//    result does not depend on the host's rounding mode or on FTZ/DAZ.
//  * fp16 / bf16: overflow goes to +-inf (IEEE); NaN stays NaN (quiet, sign kept).
//  * fp8 e4m3fn / e5m2: overflow (inf included) SATURATES to the largest finite value,
//    +-448 / +-57344, as __NV_SATFINITE does on the GPU; NaN stays NaN
//    (e4m3: S.1111.111, e5m2: S.11111.10).
//  * narrow -> fp32 is exact for every code (all 256 fp8 codes, all 65536 16-bit codes).
// The CUDA kernels implement the same rules; tests check the two agree code for code.
#pragma once

#include <cstdint>

#include "lowbit/dtype.hpp"

namespace lowbit {

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

float e4m3_to_f32(uint8_t v);
uint8_t f32_to_e4m3(float f);  // saturating: |f| > 448 (and +-inf) -> +-448

float e5m2_to_f32(uint8_t v);
uint8_t f32_to_e5m2(float f);  // saturating: |f| > 57344 (and +-inf) -> +-57344

inline constexpr float kE4M3Max = 448.0f;
inline constexpr float kE5M2Max = 57344.0f;
inline constexpr float kF16Max = 65504.0f;

// Round a float to the nearest value representable in `t` (one of f32/f16/bf16/e4m3/e5m2)
// and return it as a float. Used by the quantizers to make scales exactly representable.
float round_to(DType t, float f);

// Element `i` of a buffer of floating dtype `t`, converted to fp32.
float load_as_f32(const void* data, DType t, int64_t i);
// Store fp32 `f` into element `i` of a buffer of floating dtype `t`, rounding as above.
void store_from_f32(void* data, DType t, int64_t i, float f);

}  // namespace lowbit
