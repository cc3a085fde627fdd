// Internal: the int8 activation quantizer of the GEMV family's int8 path (W4A8 / W8A8 at
// decode). One kernel launch: f16/bf16 x (m, k) -> int8 codes (m, k) + fp32 per-token
// scales (m), bit for bit the host rule of quantize_int8(zero_point = false)
// (include/lowbit/quantize.hpp): s = max(amax, 1e-8) / 127, q = clamp(rne(x / s), -127, 127).
// Stream-ordered, no allocation: capturable in a CUDA graph.
#pragma once

#include <cstdint>

#include "lowbit/dtype.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

// x: (m, k) row-major f16 or bf16, 16-byte aligned, k a multiple of 8. q: (m, k) int8.
// scales: (m) fp32.
Status gemv_quantize_activations_int8(DType dtype, const void* x, int64_t m, int64_t k, int8_t* q,
                                      float* scales, Stream stream);

}  // namespace lowbit::cuda
