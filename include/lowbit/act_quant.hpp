// lowbit: fp8 activation quantization, the producer of an fp8 GEMM's A operand.
//
//   X (m, k) f16 / bf16  ->  codes (m, k) e4m3fn  +  fp32 scales in the layout Gemm::run reads
//
// In the CUTLASS shape of gemm.hpp: describe the problem (ActQuantDesc), make an operation for
// a device (ActQuant), ask can_implement(), allocate workspace_size() bytes, then run(). On
// CUDA, run() only enqueues work on `stream`: it never allocates, synchronizes the host or
// prints, so it can be captured in a CUDA graph; an ActQuant is immutable, and concurrent
// run() calls on different streams are safe when each has its own workspace and outputs.
//
// The outputs feed lowbit::Gemm directly: for a GemmDesc with the same m and k and
// `desc.a = ActQuantDesc::act_format()`, GemmArgs::a = ActQuantArgs::q and
// GemmArgs::a_scales = ActQuantArgs::scales, whose layout is gemm_a_scales() (gemm.hpp):
//   kDynamicPerTensor, kStaticPerTensor  (1)
//   kDynamicPerToken                     (m)
//   kDynamicBlock1x128                   (ceil(k/128), round_up(m, 4)), K-block-major, the
//                                        padding rows m..round_up(m,4)-1 written as 0.
//
// Numerics (docs/kernels/act_quant.md; bit for bit the same on the CPU and on every GPU):
//  * dynamic modes, per scale domain (tensor, row, or 128 columns of a row; the last group of
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
};
// "per-token", "per-tensor", "static", "1x128".
const char* act_quant_mode_name(ActQuantMode mode);
// The scaling of the codes a mode produces, as a GemmDesc's ActFormat names it.
Fp8Scaling act_quant_scaling(ActQuantMode mode);

struct ActQuantDesc {
  int64_t m = 0;  // rows (tokens), >= 1
  int64_t k = 0;  // columns (features), >= 1 and a multiple of 16 (see can_implement())
  DType dtype = DType::kF16;  // X: f16 or bf16
  ActQuantMode mode = ActQuantMode::kDynamicPerToken;
  // Elements between the starts of consecutive rows of X; 0 means k (dense). >= k; on CUDA
  // also a multiple of 8 (16-byte rows). The codes are always dense (row stride k).
  int64_t x_row_stride = 0;

  // {e4m3, act_quant_scaling(mode)}: the GemmDesc::a that reads this operation's outputs.
  ActFormat act_format() const;
  int64_t row_stride() const { return x_row_stride == 0 ? k : x_row_stride; }
  std::string describe() const;  // "m=4 k=4096 x=bf16 mode=1x128"
};

struct ActQuantArgs {
  // (m, k) of desc.dtype, row-major, rows desc.row_stride() elements apart. CUDA: 16-byte
  // aligned.
  const void* x = nullptr;
  // kStaticPerTensor only: (1) fp32, the scale s (device memory for CUDA). May equal `scales`.
  const float* static_scale = nullptr;
  // (m, k) e4m3fn codes, row-major, dense: GemmArgs::a. CUDA: 16-byte aligned.
  void* q = nullptr;
  // scales_count() fp32 in the layout of gemm_a_scales(): GemmArgs::a_scales. 4-byte aligned.
  float* scales = nullptr;
};

class ActQuant {
 public:
  explicit ActQuant(const ActQuantDesc& desc, Device device = Device::cuda());

  const ActQuantDesc& desc() const { return desc_; }
  Device device() const { return device_; }

  // Ok, or why this problem cannot run on this device in this build. Checked: m >= 1;
  // k >= 1 and k % 16 == 0 (the fp8 GEMM's own requirement, cuBLASLt and TMA: code rows of
  // k bytes must be 16-byte multiples; the kernel moves 16 elements per 16-byte store);
  // f16 / bf16 input; a known mode; the row stride; sizes that overflow; on CUDA: a device
  // that exists, sm_80 or newer, with machine code in this build.
  Status can_implement() const;
  // Bytes of device workspace run() needs: 4 (the amax) for kDynamicPerTensor on CUDA,
  // 0 otherwise (and 0 when can_implement() fails).
  std::size_t workspace_size() const;
  // fp32 values run() writes to `scales`, padding included: gemm_a_scales_count() of the
  // matching GemmDesc.
  int64_t scales_count() const;
  std::string kernel_name() const;  // "smxx_fp8_act_quant", "cpu_reference"; "" when none

  // CUDA: enqueue on `stream` (the device of the ActQuant must be the current device or is
  // made current for the launch); CPU: computes synchronously (stream ignored). Checks the
  // arguments (null pointers; on CUDA the alignment above) and returns a failed Status
  // without running.
  Status run(const ActQuantArgs& args, void* workspace, Stream stream = nullptr) const;

 private:
  ActQuantDesc desc_;
  Device device_;
  Status status_;
};

}  // namespace lowbit
