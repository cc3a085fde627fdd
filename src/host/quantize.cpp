// lowbit: host quantizers. The rules are the comment of include/lowbit/quantize.hpp; each
// step below names the rule it implements. Everything is plain fp32 IEEE arithmetic in a
// fixed order, so two runs (and two machines with IEEE fp32) give the same bits.
#include "lowbit/quantize.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "lowbit/numeric.hpp"
#include "lowbit/status.hpp"

namespace lowbit {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error("lowbit: " + message); }

// Round half to even in the default rounding mode (the header's rne()).
float rne(float x) { return std::nearbyint(x); }

float smallest_normal(DType t) {
  switch (t) {
    case DType::kF16: return 6.103515625e-05f;  // 2^-14
    default: return FLT_MIN;                    // bf16 and f32: 2^-126
  }
}

float largest_finite(DType t) {
  switch (t) {
    case DType::kF16: return kF16Max;
    case DType::kBF16: return bf16_to_f32(0x7F7F);  // (2 - 2^-7) * 2^127
    default: return FLT_MAX;
  }
}

// round_to(sdt, s) with the two repairs of the rules: a scale that rounds to 0 becomes the
// smallest normal, one that overflows becomes the largest finite value.
float stored_scale(DType sdt, float s) {
  const float r = round_to(sdt, s);
  if (r == 0.0f) return smallest_normal(sdt);
  if (std::isinf(r)) return largest_finite(sdt);
  return r;
}

void check_shape(const char* fn, const char* operand, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0)
    fail(std::string(fn) + ": " + operand + " shape " + std::to_string(rows) + " x " +
         std::to_string(cols) + " is empty or negative, expected both > 0");
  if (rows > std::numeric_limits<int64_t>::max() / cols)
    fail(std::string(fn) + ": " + operand + " shape " + std::to_string(rows) + " x " +
         std::to_string(cols) + " overflows the element count");
}

void check_finite(const char* fn, const char* operand, const float* x, int64_t rows,
                  int64_t cols) {
  if (x == nullptr) fail(std::string(fn) + ": " + operand + " is null");
  for (int64_t i = 0; i < rows * cols; ++i)
    if (!std::isfinite(x[i])) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(x[i]));
      fail(std::string(fn) + ": " + operand + " at row " + std::to_string(i / cols) + ", col " +
           std::to_string(i % cols) + " is " + buf + ", expected a finite value");
    }
}

}  // namespace

// =======================================================================================
// Integer weights
// =======================================================================================
IntWeight quantize_int(const float* w, int64_t n, int64_t k, const IntWeightFormat& format,
                       const int32_t* g_idx) {
  throw_if_error(format.validate());
  const std::string nm = format.name();
  const char* fn = "quantize_int";
  check_shape(fn, "weight", n, k);
  if (format.group_size != 0 && k % format.group_size != 0)
    fail("weight K=" + std::to_string(k) + " is not a multiple of group_size=" +
         std::to_string(format.group_size) + " (" + nm + ")");
  if (format.act_order && g_idx == nullptr)
    fail(std::string(fn) + ": g_idx is null, expected (K) groups for act-order (" + nm + ")");
  if (!format.act_order && g_idx != nullptr)
    fail(std::string(fn) + ": g_idx given for a format without act-order (" + nm + ")");
  check_finite(fn, "weight", w, n, k);

  IntWeight out;
  out.format = format;
  out.n = n;
  out.k = k;
  const int64_t groups = out.groups();
  if (format.act_order) {
    out.g_idx.assign(g_idx, g_idx + k);
    for (int64_t c = 0; c < k; ++c)
      if (g_idx[c] < 0 || g_idx[c] >= groups)
        fail("weight g_idx[" + std::to_string(c) + "] is " + std::to_string(g_idx[c]) +
             ", expected in [0, " + std::to_string(groups) + ") (" + nm + ")");
  }
  const size_t nk = static_cast<size_t>(n * k), ng = static_cast<size_t>(n * groups);
  out.codes.resize(nk);
  out.scales.resize(ng);
  if (format.zero == ZeroPoint::kInteger) out.zeros.resize(ng);
  if (format.zero == ZeroPoint::kFloat) out.zeros_f.resize(ng);

  const DType sdt = format.scale_dtype;
  const int b = format.bits;
  const float max_code = static_cast<float>(format.max_code());  // 2^b - 1
  const float half = static_cast<float>(format.symmetric_zero());  // 2^(b-1)
  const float qmax_sym = b == 1 ? 1.0f : half - 1.0f;              // 2^(b-1) - 1, 1 for b = 1

  // Per-group statistics of one row; act-order groups are scattered along K.
  std::vector<float> lo(static_cast<size_t>(groups)), hi(lo.size()), amax(lo.size());
  std::vector<char> seen(lo.size());
  // Per-group quantization parameters of one row.
  std::vector<float> scale(lo.size()), zero(lo.size());

  for (int64_t r = 0; r < n; ++r) {
    const float* row = w + r * k;
    std::fill(seen.begin(), seen.end(), 0);
    for (int64_t c = 0; c < k; ++c) {
      const size_t g = static_cast<size_t>(out.group_of(c));
      const float x = row[c];
      if (!seen[g]) {
        lo[g] = hi[g] = x;
        amax[g] = std::fabs(x);
        seen[g] = 1;
      } else {
        lo[g] = std::min(lo[g], x);
        hi[g] = std::max(hi[g], x);
        amax[g] = std::max(amax[g], std::fabs(x));
      }
    }
    for (size_t g = 0; g < lo.size(); ++g) {
      if (!seen[g]) lo[g] = hi[g] = amax[g] = 0.0f;  // an act-order group with no column
      const size_t i = static_cast<size_t>(r * groups) + g;
      switch (format.zero) {
        case ZeroPoint::kSymmetric:
          // s = round_to(sdt, amax / qmax)
          scale[g] = stored_scale(sdt, amax[g] / qmax_sym);
          zero[g] = half;
          break;
        case ZeroPoint::kInteger: {
          // lo = min(min x, 0), hi = max(max x, 0), s = round_to(sdt, (hi - lo) / (2^b - 1)),
          // z = clamp(rne(-lo / s), 0, 2^b - 1)
          const float l = std::min(lo[g], 0.0f), h = std::max(hi[g], 0.0f);
          scale[g] = stored_scale(sdt, (h - l) / max_code);
          zero[g] = std::clamp(rne(-l / scale[g]), 0.0f, max_code);
          out.zeros[i] = static_cast<uint8_t>(zero[g]);
          break;
        }
        case ZeroPoint::kFloat: {
          // lo = min x, hi = max x, s = round_to(sdt, (hi - lo) / (2^b - 1)),
          // z = round_to(sdt, -lo / s). Not in the rules: a z that overflows the scale dtype
          // saturates to its largest finite value (zero points must be finite), and -0
          // becomes +0 (the same value, one canonical bit pattern).
          scale[g] = stored_scale(sdt, (hi[g] - lo[g]) / max_code);
          float z = round_to(sdt, -lo[g] / scale[g]);
          if (std::isinf(z)) z = std::copysign(largest_finite(sdt), z);
          zero[g] = z + 0.0f;
          out.zeros_f[i] = zero[g];
          break;
        }
      }
      out.scales[i] = scale[g];
    }
    uint8_t* codes = out.codes.data() + r * k;
    for (int64_t c = 0; c < k; ++c) {
      const size_t g = static_cast<size_t>(out.group_of(c));
      const float x = row[c];
      float q = 0.0f;
      switch (format.zero) {
        case ZeroPoint::kSymmetric:
          // q = clamp(rne(x / s), -2^(b-1), 2^(b-1) - 1) + 2^(b-1)
          q = std::clamp(rne(x / scale[g]), -half, half - 1.0f) + half;
          break;
        case ZeroPoint::kInteger:
          // q = clamp(rne(x / s) + z, 0, 2^b - 1)
          q = std::clamp(rne(x / scale[g]) + zero[g], 0.0f, max_code);
          break;
        case ZeroPoint::kFloat:
          // q = clamp(rne(x / s + z), 0, 2^b - 1)
          q = std::clamp(rne(x / scale[g] + zero[g]), 0.0f, max_code);
          break;
      }
      codes[c] = static_cast<uint8_t>(q);
    }
  }
  return out;
}

// =======================================================================================
// fp8
// =======================================================================================
Fp8Tensor quantize_fp8(const float* x, int64_t rows, int64_t cols, const Fp8Format& format) {
  throw_if_error(format.validate());
  check_shape("quantize_fp8", "input", rows, cols);
  check_finite("quantize_fp8", "input", x, rows, cols);

  Fp8Tensor t;
  t.format = format;
  t.rows = rows;
  t.cols = cols;
  const int64_t sr = t.scale_rows(), sc = t.scale_cols();
  // Rows and columns one scale covers.
  const int64_t block_rows = format.scaling == Fp8Scaling::kPerTensor     ? rows
                             : format.scaling == Fp8Scaling::kBlock128x128 ? kFp8Block
                                                                           : 1;
  const int64_t block_cols =
      format.scaling == Fp8Scaling::kBlock1x128 || format.scaling == Fp8Scaling::kBlock128x128
          ? kFp8Block
          : cols;
  const bool e5m2 = format.dtype == DType::kE5M2;
  const float fp8_max = e5m2 ? kE5M2Max : kE4M3Max;

  std::vector<float> amax(static_cast<size_t>(sr * sc), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& a = amax[static_cast<size_t>((r / block_rows) * sc + c / block_cols)];
      a = std::max(a, std::fabs(x[r * cols + c]));
    }
  // amax' = max(amax, 1e-4), s = amax' / fp8_max, and the multiplier fp8_max / amax'.
  std::vector<float> inv(amax.size());
  t.scales.resize(amax.size());
  for (size_t i = 0; i < amax.size(); ++i) {
    const float a = std::max(amax[i], 1e-4f);
    t.scales[i] = a / fp8_max;
    inv[i] = fp8_max / a;
  }
  // code = sat_rne(x * (fp8_max / amax'))
  t.codes.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[r * cols + c] * inv[static_cast<size_t>((r / block_rows) * sc + c / block_cols)];
      t.codes[static_cast<size_t>(r * cols + c)] = e5m2 ? f32_to_e5m2(v) : f32_to_e4m3(v);
    }
  return t;
}

// code = sat_rne(x * (1 / s)) with a given s (quantize.hpp).
Fp8Tensor quantize_fp8_static(const float* x, int64_t rows, int64_t cols, float scale,
                              DType dtype) {
  Fp8Format format;
  format.dtype = dtype;
  format.scaling = Fp8Scaling::kPerTensor;
  throw_if_error(format.validate());
  check_shape("quantize_fp8_static", "input", rows, cols);
  if (!std::isfinite(scale) || !(scale > 0.0f)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(scale));
    fail(std::string("quantize_fp8_static: scale is ") + buf + ", expected finite and > 0");
  }
  check_finite("quantize_fp8_static", "input", x, rows, cols);
  Fp8Tensor t;
  t.format = format;
  t.rows = rows;
  t.cols = cols;
  t.scales = {scale};
  const bool e5m2 = dtype == DType::kE5M2;
  const float inv = 1.0f / scale;  // the multiplier, rounded to fp32 first
  t.codes.resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float v = x[i] * inv;
    t.codes[static_cast<size_t>(i)] = e5m2 ? f32_to_e5m2(v) : f32_to_e4m3(v);
  }
  return t;
}

// =======================================================================================
// int8
// =======================================================================================
Int8Tensor quantize_int8(const float* x, int64_t rows, int64_t cols, bool zero_point) {
  check_shape("quantize_int8", "input", rows, cols);
  check_finite("quantize_int8", "input", x, rows, cols);
  Int8Tensor t;
  t.rows = rows;
  t.cols = cols;
  t.codes.resize(static_cast<size_t>(rows * cols));
  t.scales.resize(static_cast<size_t>(rows));
  if (zero_point) t.zeros.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float lo = row[0], hi = row[0], amax = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      lo = std::min(lo, row[c]);
      hi = std::max(hi, row[c]);
      amax = std::max(amax, std::fabs(row[c]));
    }
    int8_t* codes = t.codes.data() + r * cols;
    if (!zero_point) {
      // s = max(amax, 1e-8) / 127, q = clamp(rne(x / s), -127, 127)
      const float s = std::max(amax, 1e-8f) / 127.0f;
      t.scales[static_cast<size_t>(r)] = s;
      for (int64_t c = 0; c < cols; ++c)
        codes[c] = static_cast<int8_t>(std::clamp(rne(row[c] / s), -127.0f, 127.0f));
    } else {
      // s = max(hi - lo, 1e-8) / 255, z = clamp(rne(-128 - lo / s), -128, 127),
      // q = clamp(rne(x / s) + z, -128, 127). The header does not define lo and hi for int8;
      // they are those of the integer zero-point rule above, lo = min(min x, 0) and
      // hi = max(max x, 0): the range holds 0, so 0 is exact and a constant row (or a
      // single column) is represented instead of collapsing to a 1e-8 range.
      lo = std::min(lo, 0.0f);
      hi = std::max(hi, 0.0f);
      const float s = std::max(hi - lo, 1e-8f) / 255.0f;
      const float z = std::clamp(rne(-128.0f - lo / s), -128.0f, 127.0f);
      t.scales[static_cast<size_t>(r)] = s;
      t.zeros[static_cast<size_t>(r)] = static_cast<int32_t>(z);
      for (int64_t c = 0; c < cols; ++c)
        codes[c] = static_cast<int8_t>(std::clamp(rne(row[c] / s) + z, -128.0f, 127.0f));
    }
  }
  return t;
}

std::vector<float> to_f32(const void* data, DType t, int64_t count) {
  if (!dtype_is_float(t))
    throw Error(std::string("lowbit: to_f32: dtype ") + dtype_name(t) +
                " is not a floating type (expected f32, f16, bf16, e4m3, e5m2 or f64)");
  if (count < 0) throw Error("lowbit: to_f32: count=" + std::to_string(count) + " is negative");
  if (count > 0 && data == nullptr) throw Error("lowbit: to_f32: data is null");
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = load_as_f32(data, t, i);
  return out;
}

}  // namespace lowbit
