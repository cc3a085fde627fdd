// The GEMV kernels' scalar conversions (smxx_gemv.cuh, smxx_gemv_bitserial.cuh): a 16-bit
// scale / zero value to fp32, and the output and bias in their runtime dtype (GemvOut).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cuda/common/smxx_convert.cuh"
#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::gemv::detail {

LOWBIT_DEVICE float half_to_f32(uint32_t bits16, bool bf16) {
  return bf16 ? __uint_as_float(bits16 << 16) : __half2float(__ushort_as_half(static_cast<uint16_t>(bits16)));
}

LOWBIT_DEVICE void store_out(void* y, int64_t i, float v, int out_dtype) {
  if (out_dtype == kOutF32) {
    static_cast<float*>(y)[i] = v;
  } else if (out_dtype == kOutBf16) {
    static_cast<uint16_t*>(y)[i] = cuda::f32_to_bf16(v);
  } else {
    static_cast<uint16_t*>(y)[i] = cuda::f32_to_f16(v);
  }
}

LOWBIT_DEVICE float load_out(const void* b, int64_t i, int out_dtype) {
  if (out_dtype == kOutF32) return static_cast<const float*>(b)[i];
  const uint16_t h = static_cast<const uint16_t*>(b)[i];
  return out_dtype == kOutBf16 ? cuda::bf16_to_f32(h) : cuda::f16_to_f32(h);
}

}  // namespace lowbit::gemv::detail
