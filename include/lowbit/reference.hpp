// lowbit: the CPU reference, the oracle of every test.
//
// Dequantize exactly to fp32 (every supported code times its scale is exact in fp32), then
// a GEMM with fp64 accumulation. Multithreaded over output rows; deterministic (each output
// element is one sequential dot product, independent of the thread count).
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats.hpp"

namespace lowbit {

std::vector<float> dequantize(const IntWeight& w);   // (n, k)
std::vector<float> dequantize(const Fp8Tensor& t);   // (rows, cols)
std::vector<float> dequantize(const Int8Tensor& t);  // (rows, cols)

// The same, on raw buffers in the canonical layouts (the CPU backend's packed form):
//   codes (n, k) one per byte; scales fp32 (n, groups); zeros (n, groups) uint8 for
//   ZeroPoint::kInteger or fp32 for kFloat (null for kSymmetric); g_idx int32 (k) or null.
// Writes rows [row_begin, row_end) of the (n, k) result into out (row_begin's row first).
void dequantize_int_rows(const IntWeightFormat& f, int64_t n, int64_t k, const uint8_t* codes,
                         const float* scales, const void* zeros, const int32_t* g_idx,
                         int64_t row_begin, int64_t row_end, float* out);
// codes (rows, cols) fp8; scales fp32 grid as Fp8Tensor::scales.
void dequantize_fp8_rows(const Fp8Format& f, int64_t rows, int64_t cols, const uint8_t* codes,
                         const float* scales, int64_t row_begin, int64_t row_end, float* out);
// codes (rows, cols) int8; scales fp32 (rows); zeros int32 (rows) or null.
void dequantize_int8_rows(int64_t rows, int64_t cols, const int8_t* codes, const float* scales,
                          const int32_t* zeros, int64_t row_begin, int64_t row_end, float* out);

// c(m, n) = sum_k a(m, k) * w(n, k) + bias(n), accumulated in fp64, stored as fp32.
// a: (m, k) row-major, w: (n, k) row-major, bias: (n) or null. threads <= 0: all cores.
void gemm_nt_reference(const float* a, const float* w, const float* bias, int64_t m, int64_t n,
                       int64_t k, float* c, int threads = 0);

// Relative Frobenius error ||out - ref|| / ||ref|| computed in fp64. NaN or inf in `out`
// gives +inf, so such an output never passes a tolerance.
double relative_error(const float* out, const float* ref, int64_t count);

}  // namespace lowbit
