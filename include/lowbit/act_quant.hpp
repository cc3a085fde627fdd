// lowbit: activation quantization, the producer of a quantized GEMM's A operand.
//
//   fp8:   X (m, k) f16 / bf16  ->  codes (m, k) e4m3fn  +  fp32 scales in the layout Gemm::run reads
//   int8:  X (m, k) f16 / bf16  ->  codes (m, k) int8    +  fp32 scales (m)  [+ int32 zero points (m)]
//
// In the CUTLASS shape of gemm.hpp: describe the problem (ActQuantDesc), make an operation for
// a device (ActQuant), ask can_implement(), allocate workspace_size() bytes, then run(). On
// CUDA, run() only enqueues work on `stream`: it never allocates, synchronizes the host or
// prints, so it can be captured in a CUDA graph; an ActQuant is immutable, and concurrent
// run() calls on different streams are safe when each has its own workspace and outputs.
//
// The outputs feed lowbit::Gemm directly: for a GemmDesc with the same m and k and
// `desc.a = ActQuantDesc::act_format()`, GemmArgs::a = ActQuantArgs::q,
// GemmArgs::a_scales = ActQuantArgs::scales (and, int8 with zero point,
// GemmArgs::a_zeros = ActQuantArgs::zeros); the scales' layout is gemm_a_scales() (gemm.hpp):
//   kDynamicPerTensor, kStaticPerTensor  (1)
//   kDynamicPerToken                     (m)
//   kDynamicBlock1x128                   (ceil(k/128), round_up(m, 4)), K-block-major, the
//                                        padding rows m..round_up(m,4)-1 written as 0.
//   kInt8PerToken, kInt8PerTokenZeroPoint  (m); zero points (m) int32
//   kInt8StaticPerTensor                   (m), every entry s; with int8_zero_point, zero
//                                          points (m) int32, every entry z
//
// Numerics (docs/kernels/act_quant.md; bit for bit the same on the CPU and on every GPU):
//  * fp8 dynamic modes, per scale domain (tensor, row, or 128 columns of a row; the last group of
//    a row is partial when k % 128 != 0) exactly quantize_fp8()'s rule (quantize.hpp):
//      amax' = max(amax, 1e-4),  s = amax' / 448,  code = sat_rne(x * (448 / amax'))
//    all fp32 with IEEE division, the multiplier rounded to fp32 before the product.
//  * static per-tensor, scale s given by the caller (calibrated `input_scale`):
//      code = sat_rne(x * (1 / s)),  the multiplier 1 / s rounded to fp32 first (the form of
//      vLLM's static_scaled_fp8_quant and of the dynamic rule above); the scale written is s.
//    This is quantize_fp8_static() of quantize.hpp. s should be finite and > 0; it lives in
//    device memory, so it is NOT checked (a check would synchronize): other values give what
//    the formula gives (s = 0: every nonzero x saturates, 0 becomes the NaN code below).
//  * sat_rne: round to nearest e4m3, ties to even; |v| > 448 (inf included) saturates to
//    +-448 (never NaN). -0 gives the code 0x80.
//  * non-finite inputs (no host quantizer accepts them; here they are defined, not errors):
//    NaN does not enter amax (max ignores NaN) and its code is 0x7F, the positive e4m3 NaN,
//    whatever its sign (GPU arithmetic drops NaN signs, so no sign is promised); every other
//    product that is NaN (0 * inf) gives 0x7F too. +-inf in a dynamic domain makes its
//    amax, and so its scale, +inf and its multiplier 0: the finite codes of that domain
//    become +-0 and the inf ones 0x7F, visibly broken rather than silently clipped. In
//    static mode +-inf saturates to +-448 like any large value.
//  * int8 modes, per row, exactly quantize_int8()'s rule (quantize.hpp, docs/formats.md
//    section 5), every step one fp32 IEEE operation, a division per element (x / s, never
//    x * (1 / s)), rne = round half to even:
//      symmetric   amax = max |x|,  s = max(amax, 1e-8) / 127,  q = clamp(rne(x / s), -127, 127)
//      zero point  lo = min(min x, 0),  hi = max(max x, 0),  s = max(hi - lo, 1e-8) / 255,
//                  z = clamp(rne(-128 - lo / s), -128, 127),  q = clamp(rne(x / s) + z, -128, 127)
//    Non-finite inputs (quantize_int8() rejects them; here they are defined, not errors):
//    NaN enters neither amax nor lo nor hi (min and max ignore NaN), and a quotient x / s or
//    lo / s that is NaN counts as 0. So a NaN's code is 0 (symmetric) or z (zero point), the
//    code of x = 0. +-inf in a row makes amax or hi - lo, hence the scale, +inf: every finite
//    x / s is +-0, inf / inf is NaN, so the whole row's codes are 0 (symmetric), or z = -128
//    and every code -128 (zero point; lo / s is -0 or NaN, either counting as 0): the row
//    dequantizes to NaN ((q - z) * s = 0 * inf), visibly broken rather than clipped. (A
//    finite row whose hi - lo overflows fp32, bf16 values near +-3e38, gets s = +inf the
//    same way, as quantize_int8() does.)
//  * int8 static per tensor (kInt8StaticPerTensor), scale s and, with
//    ActQuantDesc::int8_zero_point, zero point z given by the caller (a W8A8 checkpoint's
//    calibrated input_scale / input_zero_point, import_int8.hpp), per element, the division
//    and rounding of the dynamic int8 modes (and of vLLM's static_scaled_int8_quant):
//      symmetric   q = clamp(rne(x / s), -127, 127)
//      zero point  q = clamp(rne(x / s) + z, -128, 127)   (z converted to fp32, the sum fp32)
//    The scales written are s in every row, the zero points z in every row (as given), so
//    the int8 GEMMs read them as any per-token activation. The symmetric clamp is lowbit's
//    symmetric int8 range (docs/formats.md section 5, quantize_int8(), kInt8PerToken), not
//    vLLM's [-128, 127] (cvt.rni.sat.s8): the two differ only where x / s < -127.5, -127
//    here and -128 there. s should be finite and > 0 and z in [-128, 127]; they live in
//    device memory, so they are NOT checked (a check would synchronize), on the CPU neither,
//    and other values give what the formulas give, the same on both devices: s = +-0 gives
//    +-inf quotients (codes at the clamps) and 0 / 0 = NaN (code 0 or z); s = +inf or NaN
//    gives codes 0 or z (every quotient +-0 or NaN); s < 0 negates the codes; a z outside
//    [-128, 127] is written as given but the codes stay clamped. Non-finite inputs: a NaN
//    quotient counts as 0 (code 0, or z), as in the dynamic int8 modes; +-inf (with finite
//    s > 0) clamps to the range ends like any large value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lowbit/dtype.hpp"
#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit {

enum class ActQuantMode : uint8_t {
  kDynamicPerToken,    // one scale per row, from the row's amax         (Fp8Scaling::kPerRow)
  kDynamicPerTensor,   // one scale from the amax of all of X            (Fp8Scaling::kPerTensor)
  kStaticPerTensor,    // one scale given by the caller                  (Fp8Scaling::kPerTensor)
  kDynamicBlock1x128,  // one scale per row per 128 columns (DeepSeek-V3) (Fp8Scaling::kBlock1x128)
  // int8 codes (W8A8: the A operand of sm90_int8_gemm / sm80_int8_gemm), ActFormat{kI8}:
  kInt8PerToken,           // symmetric, one scale per row                     (int8_zero_point off)
  kInt8PerTokenZeroPoint,  // asymmetric, one scale and int32 zero point per row (int8_zero_point on)
  kInt8StaticPerTensor,    // the caller's scale (and zero point when ActQuantDesc::int8_zero_point),
                           // written to every row (int8_zero_point = ActQuantDesc::int8_zero_point)
};
// "per-token", "per-tensor", "static", "1x128", "int8-per-token", "int8-per-token-zp",
// "int8-static".
const char* act_quant_mode_name(ActQuantMode mode);
// Whether a mode produces int8 codes (kInt8PerToken, kInt8PerTokenZeroPoint,
// kInt8StaticPerTensor).
bool act_quant_is_int8(ActQuantMode mode);
// The scaling of the fp8 codes a mode produces, as a GemmDesc's ActFormat names it. fp8 only:
// the int8 modes answer kPerRow (the layout of their scales, one per token; int8-static too),
// but their ActFormat does not use the field (act_format() leaves it at its default).
Fp8Scaling act_quant_scaling(ActQuantMode mode);

struct ActQuantDesc {
  int64_t m = 0;  // rows (tokens), >= 1
  int64_t k = 0;  // columns (features), >= 1 and a multiple of 16 (see can_implement())
  DType dtype = DType::kF16;  // X: f16 or bf16
  ActQuantMode mode = ActQuantMode::kDynamicPerToken;
  // Elements between the starts of consecutive rows of X; 0 means k (dense). >= k; on CUDA
  // also a multiple of 8 (16-byte rows). The codes are always dense (row stride k).
  int64_t x_row_stride = 0;
  // kInt8StaticPerTensor only (can_implement() refuses it on with any other mode): whether
  // the caller gives a static zero point (ActQuantArgs::static_zero_point) and run() writes
  // zero points; off: symmetric. Known when the GemmDesc is built, hence here, not in the
  // arguments.
  bool int8_zero_point = false;

  // The GemmDesc::a that reads this operation's outputs: {e4m3, act_quant_scaling(mode)}
  // for the fp8 modes; {i8, int8_zero_point = (mode == kInt8PerTokenZeroPoint, or
  // kInt8StaticPerTensor with int8_zero_point)} for int8.
  ActFormat act_format() const;
  int64_t row_stride() const { return x_row_stride == 0 ? k : x_row_stride; }
  std::string describe() const;  // "m=4 k=4096 x=bf16 mode=1x128" (+ " int8_zero_point")
};

struct ActQuantArgs {
  // (m, k) of desc.dtype, row-major, rows desc.row_stride() elements apart. CUDA: 16-byte
  // aligned.
  const void* x = nullptr;
  // kStaticPerTensor and kInt8StaticPerTensor only: (1) fp32, the scale s (device memory for
  // CUDA; 4-byte aligned). kStaticPerTensor: may equal `scales`. kInt8StaticPerTensor: must not
  // overlap `scales` ((m) entries, every one written; run() refuses an overlap).
  const float* static_scale = nullptr;
  // (m, k) codes, row-major, dense: GemmArgs::a. e4m3fn for the fp8 modes, int8 for the
  // int8 modes. CUDA: 16-byte aligned.
  void* q = nullptr;
  // scales_count() fp32 in the layout of gemm_a_scales(): GemmArgs::a_scales. 4-byte aligned.
  float* scales = nullptr;
  // kInt8PerTokenZeroPoint, and kInt8StaticPerTensor with int8_zero_point, only (required
  // there, ignored otherwise): (m) int32 zero points in [-128, 127], GemmArgs::a_zeros.
  // 4-byte aligned.
  int32_t* zeros = nullptr;
  // (Last, so that the positional {x, static_scale, q, scales, zeros} keeps its meaning.)
  // kInt8StaticPerTensor with ActQuantDesc::int8_zero_point only (required there, refused when
  // set without the flag): (1) int32, the zero point z, in [-128, 127] (device memory for
  // CUDA; 4-byte aligned). Must not overlap `zeros`.
  const int32_t* static_zero_point = nullptr;
};

class ActQuant {
 public:
  explicit ActQuant(const ActQuantDesc& desc, Device device = Device::cuda());

  const ActQuantDesc& desc() const { return desc_; }
  Device device() const { return device_; }

  // Ok, or why this problem cannot run on this device in this build. Checked: m >= 1;
  // k >= 1 and k % 16 == 0 (the fp8 and int8 GEMMs' own requirement, cuBLASLt and TMA: code
  // rows of k bytes must be 16-byte multiples; the kernel moves 16 elements per 16-byte store);
  // f16 / bf16 input; a known mode; int8_zero_point only with kInt8StaticPerTensor; the row
  // stride; sizes that overflow; on CUDA: a device
  // that exists, sm_80 or newer, with machine code in this build.
  Status can_implement() const;
  // Bytes of device workspace run() needs: 4 (the amax) for kDynamicPerTensor on CUDA,
  // 0 otherwise (the int8 modes included; and 0 when can_implement() fails).
  std::size_t workspace_size() const;
  // fp32 values run() writes to `scales`, padding included: gemm_a_scales_count() of the
  // matching GemmDesc (m for every int8 mode; the zero points are m int32 too).
  int64_t scales_count() const;
  // "smxx_fp8_act_quant" (fp8 modes on CUDA), "smxx_int8_act_quant" (int8 modes on CUDA),
  // "cpu_reference"; "" when none.
  std::string kernel_name() const;

  // CUDA: enqueue on `stream` (the device of the ActQuant must be the current device or is
  // made current for the launch); CPU: computes synchronously (stream ignored). Checks the
  // arguments (null pointers, `zeros` for the int8 zero-point modes, static_scale and
  // static_zero_point for the static modes, int8-static's overlaps; on CUDA the alignment
  // above) and returns a failed Status without running.
  Status run(const ActQuantArgs& args, void* workspace, Stream stream = nullptr) const;

 private:
  ActQuantDesc desc_;
  Device device_;
  Status status_;
};

}  // namespace lowbit
