// lowbit: host quantizers (round to nearest, reproducible bit for bit).
//
// The exact rules are in docs/formats.md ("Quantizers"); in short:
//  * integer, symmetric:  qmax = 2^(b-1) - 1 (1 for b = 1), s = round_to(sdt, amax / qmax),
//                         q = clamp(rne(x / s), -2^(b-1), 2^(b-1) - 1) + 2^(b-1)
//  * integer, int zero:   lo = min(min x, 0), hi = max(max x, 0),
//                         s = round_to(sdt, (hi - lo) / (2^b - 1)), z = clamp(rne(-lo / s), 0, 2^b-1),
//                         q = clamp(rne(x / s) + z, 0, 2^b - 1)
//  * integer, float zero: lo = min x, hi = max x, s = round_to(sdt, (hi - lo) / (2^b - 1)),
//                         z = round_to(sdt, -lo / s), q = clamp(rne(x / s + z), 0, 2^b - 1)
//  * a scale that rounds to 0 (all-zero group) becomes the smallest normal of the scale dtype;
//    one that overflows the scale dtype becomes its largest finite value.
//  * fp8: amax' = max(amax, 1e-4), s = amax' / fp8_max, code = sat_rne(x * (fp8_max / amax')).
//  * int8 per row: symmetric s = max(amax, 1e-8) / 127, q = clamp(rne(x / s), -127, 127);
//    with zero point: s = max(hi - lo, 1e-8) / 255, z = clamp(rne(-128 - lo / s), -128, 127),
//    q = clamp(rne(x / s) + z, -128, 127), lo and hi as for "int zero" (the range holds 0).
// All arithmetic is fp32 with IEEE division; rne() is round-half-to-even (std::nearbyint in
// the default rounding mode).
#pragma once

#include <cstdint>

#include "lowbit/dtype.hpp"
#include "lowbit/formats.hpp"

namespace lowbit {

// w: (n, k) row-major fp32 values. With format.act_order, g_idx (k) must be given and gives
// the group of each column (GPTQ); otherwise it must be null.
IntWeight quantize_int(const float* w, int64_t n, int64_t k, const IntWeightFormat& format,
                       const int32_t* g_idx = nullptr);

Fp8Tensor quantize_fp8(const float* x, int64_t rows, int64_t cols, const Fp8Format& format);

// The floor of amax in the fp8 rule above (amax' = max(amax, 1e-4)): an all-zero block gets
// the scale 1e-4 / fp8_max instead of 0.
inline constexpr float kFp8AmaxFloor = 1e-4f;

// fp8 per-tensor with a given (static, calibrated) scale s, e.g. a checkpoint's input_scale:
// code = sat_rne(x * (1 / s)), the multiplier 1 / s rounded to fp32 before the product (the
// form of the dynamic rule above and of vLLM's static_scaled_fp8_quant); scales = {s}.
// s must be finite and > 0, x finite. ActQuant's kStaticPerTensor (act_quant.hpp) computes
// exactly this on the CPU and the GPU.
Fp8Tensor quantize_fp8_static(const float* x, int64_t rows, int64_t cols, float scale,
                              DType dtype = DType::kE4M3);

// Per-row int8; `zero_point` false for weights (symmetric per channel) and symmetric
// per-token activations.
Int8Tensor quantize_int8(const float* x, int64_t rows, int64_t cols, bool zero_point);

// Convenience: converts `count` elements of a buffer of floating dtype `t` to fp32.
std::vector<float> to_f32(const void* data, DType t, int64_t count);

}  // namespace lowbit
