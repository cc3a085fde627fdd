// lowbit: the CPU reference (dequantize, then an fp64-accumulated GEMM), the tests' oracle.
#include "lowbit/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "cpu/parallel.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace lowbit {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error("lowbit: " + message); }

// Shared argument checks of the *_rows functions.
void check_rows(const char* fn, int64_t rows, int64_t cols, int64_t row_begin, int64_t row_end,
                const void* codes, const float* scales, const float* out) {
  if (rows <= 0 || cols <= 0 || rows > std::numeric_limits<int64_t>::max() / cols)
    fail(std::string(fn) + ": shape " + std::to_string(rows) + " x " + std::to_string(cols) +
         " is empty, negative or too large");
  if (row_begin < 0 || row_begin > row_end || row_end > rows)
    fail(std::string(fn) + ": row range [" + std::to_string(row_begin) + ", " +
         std::to_string(row_end) + ") is not inside [0, " + std::to_string(rows) + ")");
  if (codes == nullptr || scales == nullptr || (row_end > row_begin && out == nullptr))
    fail(std::string(fn) + ": codes, scales and out must not be null");
}

// Rows per parallel chunk so that a chunk holds at least ~64K elements.
int64_t min_rows_per_chunk(int64_t cols) { return std::max<int64_t>(1, (int64_t{1} << 16) / cols); }

}  // namespace

// =======================================================================================
// Dequantization: the *_rows functions are the single implementation.
// =======================================================================================
void dequantize_int_rows(const IntWeightFormat& f, int64_t n, int64_t k, const uint8_t* codes,
                         const float* scales, const void* zeros, const int32_t* g_idx,
                         int64_t row_begin, int64_t row_end, float* out) {
  const char* fn = "dequantize_int_rows";
  throw_if_error(f.validate());
  check_rows(fn, n, k, row_begin, row_end, codes, scales, out);
  if (f.group_size != 0 && k % f.group_size != 0)
    fail("weight K=" + std::to_string(k) + " is not a multiple of group_size=" +
         std::to_string(f.group_size) + " (" + f.name() + ")");
  if (f.zero != ZeroPoint::kSymmetric && zeros == nullptr)
    fail(std::string(fn) + ": zeros is null, expected (N, groups) zero points (" + f.name() + ")");
  if (f.act_order != (g_idx != nullptr))
    fail(std::string(fn) + ": g_idx must be given exactly for act-order formats (" + f.name() + ")");
  const int64_t groups = f.group_size == 0 ? 1 : k / f.group_size;
  const uint8_t* zeros_i = static_cast<const uint8_t*>(zeros);
  const float* zeros_f = static_cast<const float*>(zeros);
  const float sym_zero = static_cast<float>(f.symmetric_zero());

  for (int64_t r = row_begin; r < row_end; ++r) {
    float* dst = out + (r - row_begin) * k;
    for (int64_t c = 0; c < k; ++c) {
      int64_t g = 0;
      if (f.act_order) {
        g = g_idx[c];
        if (g < 0 || g >= groups)
          fail(std::string(fn) + ": g_idx[" + std::to_string(c) + "] is " + std::to_string(g) +
               ", expected in [0, " + std::to_string(groups) + ") (" + f.name() + ")");
      } else if (f.group_size != 0) {
        g = c / f.group_size;
      }
      const int64_t sg = r * groups + g;  // index of the (row, group) scale and zero
      const float z = f.zero == ZeroPoint::kInteger ? static_cast<float>(zeros_i[sg])
                      : f.zero == ZeroPoint::kFloat ? zeros_f[sg]
                                                    : sym_zero;
      // (q - z) * s in fp32, the definition in formats.hpp (IntWeight::dequant agrees).
      dst[c] = (static_cast<float>(codes[r * k + c]) - z) * scales[sg];
    }
  }
}

void dequantize_fp8_rows(const Fp8Format& f, int64_t rows, int64_t cols, const uint8_t* codes,
                         const float* scales, int64_t row_begin, int64_t row_end, float* out) {
  throw_if_error(f.validate());
  check_rows("dequantize_fp8_rows", rows, cols, row_begin, row_end, codes, scales, out);
  // The scale grid of Fp8Tensor: block_rows x block_cols elements share one scale.
  const bool blocked_cols =
      f.scaling == Fp8Scaling::kBlock1x128 || f.scaling == Fp8Scaling::kBlock128x128;
  const int64_t scale_cols = blocked_cols ? (cols + kFp8Block - 1) / kFp8Block : 1;
  const int64_t block_cols = blocked_cols ? kFp8Block : cols;
  const int64_t block_rows = f.scaling == Fp8Scaling::kPerTensor     ? rows
                             : f.scaling == Fp8Scaling::kBlock128x128 ? kFp8Block
                                                                      : 1;
  const bool e5m2 = f.dtype == DType::kE5M2;
  for (int64_t r = row_begin; r < row_end; ++r) {
    float* dst = out + (r - row_begin) * cols;
    const float* scale_row = scales + (r / block_rows) * scale_cols;
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t code = codes[r * cols + c];
      const float v = e5m2 ? e5m2_to_f32(code) : e4m3_to_f32(code);
      dst[c] = v * scale_row[c / block_cols];  // Fp8Tensor::dequant agrees
    }
  }
}

void dequantize_int8_rows(int64_t rows, int64_t cols, const int8_t* codes, const float* scales,
                          const int32_t* zeros, int64_t row_begin, int64_t row_end, float* out) {
  check_rows("dequantize_int8_rows", rows, cols, row_begin, row_end, codes, scales, out);
  for (int64_t r = row_begin; r < row_end; ++r) {
    float* dst = out + (r - row_begin) * cols;
    const float z = zeros != nullptr ? static_cast<float>(zeros[r]) : 0.0f;
    const float s = scales[r];
    for (int64_t c = 0; c < cols; ++c)
      dst[c] = (static_cast<float>(codes[r * cols + c]) - z) * s;  // Int8Tensor::dequant agrees
  }
}

std::vector<float> dequantize(const IntWeight& w) {
  throw_if_error(w.validate());
  std::vector<float> out(static_cast<size_t>(w.n * w.k));
  const void* zeros = w.format.zero == ZeroPoint::kInteger ? static_cast<const void*>(w.zeros.data())
                      : w.format.zero == ZeroPoint::kFloat ? static_cast<const void*>(w.zeros_f.data())
                                                           : nullptr;
  const int32_t* g_idx = w.format.act_order ? w.g_idx.data() : nullptr;
  detail::parallel_for(
      0, w.n, 0,
      [&](int64_t r0, int64_t r1) {
        dequantize_int_rows(w.format, w.n, w.k, w.codes.data(), w.scales.data(), zeros, g_idx,
                            r0, r1, out.data() + r0 * w.k);
      },
      min_rows_per_chunk(w.k));
  return out;
}

std::vector<float> dequantize(const Fp8Tensor& t) {
  throw_if_error(t.validate());
  std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
  detail::parallel_for(
      0, t.rows, 0,
      [&](int64_t r0, int64_t r1) {
        dequantize_fp8_rows(t.format, t.rows, t.cols, t.codes.data(), t.scales.data(), r0, r1,
                            out.data() + r0 * t.cols);
      },
      min_rows_per_chunk(t.cols));
  return out;
}

std::vector<float> dequantize(const Int8Tensor& t) {
  throw_if_error(t.validate());
  std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
  const int32_t* zeros = t.has_zero_point() ? t.zeros.data() : nullptr;
  detail::parallel_for(
      0, t.rows, 0,
      [&](int64_t r0, int64_t r1) {
        dequantize_int8_rows(t.rows, t.cols, t.codes.data(), t.scales.data(), zeros, r0, r1,
                             out.data() + r0 * t.cols);
      },
      min_rows_per_chunk(t.cols));
  return out;
}

// =======================================================================================
// GEMM
// =======================================================================================
void gemm_nt_reference(const float* a, const float* w, const float* bias, int64_t m, int64_t n,
                       int64_t k, float* c, int threads) {
  if (m < 0 || n < 0 || k < 0)
    fail("gemm_nt_reference: shape m=" + std::to_string(m) + " n=" + std::to_string(n) +
         " k=" + std::to_string(k) + " has a negative size");
  if (m == 0 || n == 0) return;
  if (c == nullptr || (k > 0 && (a == nullptr || w == nullptr)))
    fail("gemm_nt_reference: a, w and c must not be null");

  // Work item: one output row times a block of kColBlock columns, so a GEMV (m = 1) still
  // spreads over threads. Every output element is one sequential fp64 dot product over k
  // (the products of two floats are exact in fp64), so the result does not depend on how
  // items are split between threads.
  constexpr int64_t kColBlock = 64;
  const int64_t col_blocks = (n + kColBlock - 1) / kColBlock;
  const int64_t macs_per_item = std::max<int64_t>(1, std::min(n, kColBlock) * k);
  const int64_t min_items = std::max<int64_t>(1, (int64_t{1} << 18) / macs_per_item);

  auto dot = [k](const float* x, const float* y) {
    double s = 0.0;
    for (int64_t i = 0; i < k; ++i) s += static_cast<double>(x[i]) * static_cast<double>(y[i]);
    return s;
  };
  auto body = [&](int64_t item_begin, int64_t item_end) {
    for (int64_t item = item_begin; item < item_end; ++item) {
      const int64_t i = item / col_blocks;
      const int64_t j0 = (item % col_blocks) * kColBlock, j1 = std::min(n, j0 + kColBlock);
      const float* ar = a + i * k;
      int64_t j = j0;
      // Four columns at once: four independent add chains, same per-element order.
      for (; j + 4 <= j1; j += 4) {
        const float* w0 = w + j * k;
        const float* w1 = w0 + k;
        const float* w2 = w1 + k;
        const float* w3 = w2 + k;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int64_t kk = 0; kk < k; ++kk) {
          const double x = ar[kk];
          s0 += x * static_cast<double>(w0[kk]);
          s1 += x * static_cast<double>(w1[kk]);
          s2 += x * static_cast<double>(w2[kk]);
          s3 += x * static_cast<double>(w3[kk]);
        }
        const double acc[4] = {s0, s1, s2, s3};
        for (int t = 0; t < 4; ++t)
          c[i * n + j + t] =
              static_cast<float>(acc[t] + (bias ? static_cast<double>(bias[j + t]) : 0.0));
      }
      for (; j < j1; ++j)
        c[i * n + j] =
            static_cast<float>(dot(ar, w + j * k) + (bias ? static_cast<double>(bias[j]) : 0.0));
    }
  };
  detail::parallel_for(0, m * col_blocks, threads, body, min_items);
}

double relative_error(const float* out, const float* ref, int64_t count) {
  if (count <= 0) return 0.0;
  double diff2 = 0.0, ref2 = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    // A non-finite output (or oracle) never passes a tolerance.
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i]))
      return std::numeric_limits<double>::infinity();
    const double d = static_cast<double>(out[i]) - static_cast<double>(ref[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  if (ref2 == 0.0) return diff2 == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff2 / ref2);
}

}  // namespace lowbit
