// Tests of the CPU reference (include/lowbit/reference.hpp) against a naive double-precision
// triple loop written here, on operands dequantized here from the documented formulas.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/parallel.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"

namespace {

using namespace lowbit;

uint32_t g_seed = 9000;  // each case draws the next seed: fresh data, printed on failure
constexpr int64_t kEdges[] = {1, 2, 3, 15, 17, 63, 65, 127, 129};

std::vector<float> random_floats(int64_t count, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = d(rng);
  return v;
}

// --------------------------------------------------------------------------- the oracle
// Dequantization from the formulas of formats.hpp, written independently of the library.
std::vector<float> oracle_dequant(const IntWeight& w) {
  const int64_t groups = w.format.group_size ? w.k / w.format.group_size : 1;
  std::vector<float> out(static_cast<size_t>(w.n * w.k));
  for (int64_t r = 0; r < w.n; ++r)
    for (int64_t c = 0; c < w.k; ++c) {
      const int64_t g = w.format.act_order ? w.g_idx[c] : w.format.group_size ? c / w.format.group_size : 0;
      const size_t i = static_cast<size_t>(r * groups + g);
      float z = static_cast<float>(1 << (w.format.bits - 1));
      if (w.format.zero == ZeroPoint::kInteger) z = w.zeros[i];
      if (w.format.zero == ZeroPoint::kFloat) z = w.zeros_f[i];
      out[r * w.k + c] = (static_cast<float>(w.codes[r * w.k + c]) - z) * w.scales[i];
    }
  return out;
}

std::vector<float> oracle_dequant(const Fp8Tensor& t) {
  const int64_t blocks_per_row = (t.cols + 127) / 128;
  std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      int64_t si = 0;
      switch (t.format.scaling) {
        case Fp8Scaling::kPerTensor: si = 0; break;
        case Fp8Scaling::kPerRow: si = r; break;
        case Fp8Scaling::kBlock1x128: si = r * blocks_per_row + c / 128; break;
        case Fp8Scaling::kBlock128x128: si = (r / 128) * blocks_per_row + c / 128; break;
      }
      const uint8_t code = t.codes[r * t.cols + c];
      const float v = t.format.dtype == DType::kE4M3 ? e4m3_to_f32(code) : e5m2_to_f32(code);
      out[r * t.cols + c] = v * t.scales[si];
    }
  return out;
}

std::vector<float> oracle_dequant(const Int8Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      const float z = t.zeros.empty() ? 0.0f : static_cast<float>(t.zeros[r]);
      out[r * t.cols + c] = (static_cast<float>(t.codes[r * t.cols + c]) - z) * t.scales[r];
    }
  return out;
}

// The naive triple loop in double.
std::vector<double> oracle_gemm(const std::vector<float>& a, const std::vector<float>& w,
                                const float* bias, int64_t m, int64_t n, int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * static_cast<double>(w[j * k + p]);
      c[i * n + j] = s + (bias ? bias[j] : 0.0);
    }
  return c;
}

// Runs the reference on the library's dequantized operands and compares with the oracle on
// the test's: the dequantized operands bit for bit, the product within 1e-12 relative error
// (after the fp32 store both sides make), each element within the fp32 rounding.
void check_gemm(const std::vector<float>& a_lib, const std::vector<float>& a_oracle,
                const std::vector<float>& w_lib, const std::vector<float>& w_oracle, int64_t m,
                int64_t n, int64_t k, std::mt19937& rng) {
  ASSERT_EQ(a_lib.size(), a_oracle.size());
  ASSERT_EQ(w_lib.size(), w_oracle.size());
  ASSERT_EQ(std::memcmp(a_lib.data(), a_oracle.data(), a_lib.size() * 4), 0) << "A dequantization differs";
  ASSERT_EQ(std::memcmp(w_lib.data(), w_oracle.data(), w_lib.size() * 4), 0) << "W dequantization differs";
  const bool with_bias = rng() & 1;
  const std::vector<float> bias = random_floats(n, rng);
  std::vector<float> c(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());  // poison
  gemm_nt_reference(a_lib.data(), w_lib.data(), with_bias ? bias.data() : nullptr, m, n, k, c.data(), 2);
  const std::vector<double> want = oracle_gemm(a_oracle, w_oracle, with_bias ? bias.data() : nullptr, m, n, k);
  std::vector<float> want_f(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    want_f[i] = static_cast<float>(want[i]);
    ASSERT_TRUE(std::isfinite(c[i])) << "element " << i << " not written or not finite";
    ASSERT_LE(std::fabs(c[i] - want[i]), std::ldexp(std::fabs(want[i]), -24) + 1e-300)
        << "element " << i << " (bias " << with_bias << ")";
  }
  EXPECT_LT(relative_error(c.data(), want_f.data(), m * n), 1e-12) << "bias " << with_bias;
  double norm = 0;
  for (double v : want) norm += v * v;
  EXPECT_GT(norm, 0.0) << "all-zero output: the test is vacuous";
}

std::string shape_text(int64_t m, int64_t n, int64_t k, uint32_t seed) {
  return " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
         " seed=" + std::to_string(seed);
}

// --------------------------------------------------------------------------- formats
TEST(Reference, int_weights_every_bits_group_zero_mode_and_act_order) {
  int cases = 0;
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : {0, 32, 64, 128})
      for (ZeroPoint zero : {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat})
        for (bool act : {false, true}) {
          if (act && group == 0) continue;
          IntWeightFormat f;
          f.bits = bits;
          f.group_size = group;
          f.zero = zero;
          f.act_order = act;
          f.scale_dtype = cases % 3 == 0 ? DType::kF16 : cases % 3 == 1 ? DType::kBF16 : DType::kF32;
          const int64_t m = kEdges[cases % 7], n = kEdges[(cases * 5 + 3) % 9];
          const int64_t k = group ? group * (1 + cases % 2) : kEdges[(cases * 3) % 9];
          ++cases;
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          SCOPED_TRACE(f.name() + " scale=" + dtype_name(f.scale_dtype) + shape_text(m, n, k, seed));
          const std::vector<float> wf = random_floats(n * k, rng, 0.05f);
          std::vector<int32_t> g_idx;
          for (int64_t c = 0; act && c < k; ++c) g_idx.push_back(static_cast<int32_t>(rng() % (k / group)));
          const IntWeight w = quantize_int(wf.data(), n, k, f, act ? g_idx.data() : nullptr);
          const std::vector<float> a = random_floats(m * k, rng);
          check_gemm(a, a, dequantize(w), oracle_dequant(w), m, n, k, rng);
          if (HasFatalFailure()) return;
        }
}

TEST(Reference, fp8_every_scaling_both_dtypes) {
  const Fp8Scaling act_scalings[] = {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow, Fp8Scaling::kBlock1x128};
  const Fp8Scaling w_scalings[] = {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow, Fp8Scaling::kBlock1x128,
                                   Fp8Scaling::kBlock128x128};
  int cases = 0;
  for (DType t : {DType::kE4M3, DType::kE5M2})
    for (Fp8Scaling as : act_scalings)
      for (Fp8Scaling ws : w_scalings) {
        const int64_t m = kEdges[cases % 9], n = kEdges[(cases * 4 + 5) % 9] + (cases % 2) * 128;
        const int64_t k = kEdges[(cases * 7 + 2) % 9] + (cases % 3) * 128;  // partial 128 blocks
        ++cases;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        Fp8Format af, wf;
        af.dtype = wf.dtype = t;
        af.scaling = as;
        wf.scaling = ws;
        SCOPED_TRACE("a=" + af.name() + " w=" + wf.name() + shape_text(m, n, k, seed));
        const std::vector<float> ax = random_floats(m * k, rng), wx = random_floats(n * k, rng);
        const Fp8Tensor a = quantize_fp8(ax.data(), m, k, af);
        const Fp8Tensor w = quantize_fp8(wx.data(), n, k, wf);
        check_gemm(dequantize(a), oracle_dequant(a), dequantize(w), oracle_dequant(w), m, n, k, rng);
        if (HasFatalFailure()) return;
      }
}

TEST(Reference, int8_with_and_without_zero_points) {
  int cases = 0;
  for (bool a_zp : {false, true})
    for (bool w_zp : {false, true})
      for (int rep = 0; rep < 3; ++rep) {
        const int64_t m = kEdges[(cases * 2 + rep) % 9], n = kEdges[(cases + 4) % 9], k = kEdges[(cases * 5 + 1) % 9];
        ++cases;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        SCOPED_TRACE(std::string("a_zero_point=") + (a_zp ? "1" : "0") + " w_zero_point=" + (w_zp ? "1" : "0") +
                     shape_text(m, n, k, seed));
        std::vector<float> ax = random_floats(m * k, rng);
        for (auto& v : ax) v += 0.5f;  // skewed, as activations after a GELU
        const std::vector<float> wx = random_floats(n * k, rng);
        const Int8Tensor a = quantize_int8(ax.data(), m, k, a_zp);
        const Int8Tensor w = quantize_int8(wx.data(), n, k, w_zp);
        check_gemm(dequantize(a), oracle_dequant(a), dequantize(w), oracle_dequant(w), m, n, k, rng);
        if (HasFatalFailure()) return;
      }
}

TEST(Reference, dense_f16_bf16_f32) {
  int cases = 0;
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32})
    for (int rep = 0; rep < 3; ++rep) {
      const int64_t m = kEdges[(cases * 2 + 1) % 9], n = kEdges[(cases * 7) % 9], k = kEdges[(cases * 4 + 3) % 9];
      ++cases;
      const uint32_t seed = g_seed++;
      std::mt19937 rng(seed);
      SCOPED_TRACE(std::string("dense ") + dtype_name(t) + shape_text(m, n, k, seed));
      // Operands stored in `t`, widened by to_f32() (library) and by the codec loop (oracle).
      auto make = [&](int64_t count, std::vector<float>& lib, std::vector<float>& oracle) {
        const std::vector<float> x = random_floats(count, rng);
        std::vector<unsigned char> buf(static_cast<size_t>(count) * dtype_size(t));
        for (int64_t i = 0; i < count; ++i) store_from_f32(buf.data(), t, i, x[i]);
        lib = to_f32(buf.data(), t, count);
        oracle.resize(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
          uint16_t h;
          if (t == DType::kF32) {
            std::memcpy(&oracle[i], buf.data() + 4 * i, 4);
            continue;
          }
          std::memcpy(&h, buf.data() + 2 * i, 2);
          oracle[i] = t == DType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
        }
      };
      std::vector<float> a, a_o, w, w_o;
      make(m * k, a, a_o);
      make(n * k, w, w_o);
      check_gemm(a, a_o, w, w_o, m, n, k, rng);
      if (HasFatalFailure()) return;
    }
}

// --------------------------------------------------------------------------- properties
TEST(Reference, multithreaded_result_bit_identical_to_one_thread) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{65, 129, 257}, {1, 1000, 300}, {129, 63, 17}, {3, 5, 0}}) {
    const uint32_t seed = g_seed++;
    std::mt19937 rng(seed);
    SCOPED_TRACE(shape_text(m, n, k, seed));
    const std::vector<float> a = random_floats(m * k, rng), w = random_floats(n * k, rng), bias = random_floats(n, rng);
    std::vector<float> c1(static_cast<size_t>(m * n));
    gemm_nt_reference(a.data(), w.data(), bias.data(), m, n, k, c1.data(), 1);
    for (int threads : {2, 3, 7, 0, -1}) {
      std::vector<float> ct(c1.size(), std::numeric_limits<float>::quiet_NaN());
      gemm_nt_reference(a.data(), w.data(), bias.data(), m, n, k, ct.data(), threads);
      EXPECT_EQ(std::memcmp(ct.data(), c1.data(), c1.size() * 4), 0) << "threads=" << threads;
    }
    if (k == 0) {
      for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(c1[i], bias[i % n]);  // empty sum + bias
    }
  }
  gemm_nt_reference(nullptr, nullptr, nullptr, 0, 5, 5, nullptr);  // m = 0: nothing to do
  EXPECT_THROW(gemm_nt_reference(nullptr, nullptr, nullptr, -1, 5, 5, nullptr), Error);
  float c = 0;
  EXPECT_THROW(gemm_nt_reference(nullptr, &c, nullptr, 1, 1, 1, &c), Error);
}

TEST(Reference, relative_error_values_and_non_finite_outputs) {
  const std::vector<float> ref = {1.0f, -2.0f, 2.0f};
  std::vector<float> out = ref;
  EXPECT_EQ(relative_error(out.data(), ref.data(), 3), 0.0);
  out = {1.01f, -2.02f, 2.02f};
  EXPECT_NEAR(relative_error(out.data(), ref.data(), 3), 0.01, 1e-7);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    out = ref;
    out[1] = bad;
    EXPECT_EQ(relative_error(out.data(), ref.data(), 3), std::numeric_limits<double>::infinity()) << bad;
  }
  const std::vector<float> zeros(3, 0.0f);
  EXPECT_EQ(relative_error(zeros.data(), zeros.data(), 3), 0.0);
  EXPECT_EQ(relative_error(ref.data(), zeros.data(), 3), std::numeric_limits<double>::infinity());
  EXPECT_EQ(relative_error(ref.data(), ref.data(), 0), 0.0);
  // fp64: an error far below fp32 resolution is still seen.
  out = {1.0f, -2.0f, std::nextafter(2.0f, 3.0f)};
  EXPECT_GT(relative_error(out.data(), ref.data(), 3), 0.0);
}

TEST(Reference, dequantize_rows_writes_only_the_requested_rows) {
  const uint32_t seed = g_seed++;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed=" + std::to_string(seed));
  IntWeightFormat f;
  f.bits = 3;
  f.group_size = 32;
  f.zero = ZeroPoint::kInteger;
  const int64_t n = 17, k = 96;
  const std::vector<float> x = random_floats(n * k, rng);
  const IntWeight w = quantize_int(x.data(), n, k, f);
  const std::vector<float> full = dequantize(w);
  std::vector<float> part((5 + 2) * k, -7.0f);  // rows 4..8 plus a guard row on each side
  dequantize_int_rows(f, n, k, w.codes.data(), w.scales.data(), w.zeros.data(), nullptr, 4, 9, part.data() + k);
  for (int64_t i = 0; i < k; ++i) EXPECT_EQ(part[i], -7.0f);
  for (int64_t i = 6 * k; i < 7 * k; ++i) EXPECT_EQ(part[i], -7.0f);
  EXPECT_EQ(std::memcmp(part.data() + k, full.data() + 4 * k, 5 * k * 4), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) ASSERT_EQ(full[r * k + c], w.dequant(r, c));

  const Fp8Tensor t = quantize_fp8(x.data(), n, k, Fp8Format{});
  std::vector<float> fp8_part(2 * k);
  dequantize_fp8_rows(t.format, n, k, t.codes.data(), t.scales.data(), 15, 17, fp8_part.data());
  const std::vector<float> fp8_full = dequantize(t);
  EXPECT_EQ(std::memcmp(fp8_part.data(), fp8_full.data() + 15 * k, 2 * k * 4), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) ASSERT_EQ(fp8_full[r * k + c], t.dequant(r, c));

  const Int8Tensor q8 = quantize_int8(x.data(), n, k, true);
  const std::vector<float> i8_full = dequantize(q8);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) ASSERT_EQ(i8_full[r * k + c], q8.dequant(r, c));

  // Bad arguments throw instead of reading out of bounds.
  EXPECT_THROW(dequantize_int_rows(f, n, k, w.codes.data(), w.scales.data(), w.zeros.data(), nullptr, 3, 18, part.data()), Error);
  EXPECT_THROW(dequantize_int_rows(f, n, k, w.codes.data(), w.scales.data(), nullptr, nullptr, 0, 1, part.data()), Error);
  EXPECT_THROW(dequantize_int_rows(f, n, 100, w.codes.data(), w.scales.data(), w.zeros.data(), nullptr, 0, 1, part.data()), Error);
  IntWeight bad = w;
  bad.codes[3] = 8;
  EXPECT_THROW(dequantize(bad), Error);  // the struct version validates first
}

TEST(Reference, parallel_for_covers_the_range_once_and_rethrows) {
  for (int threads : {1, 2, 5, 0})
    for (int64_t count : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      detail::parallel_for(10, 10 + count, threads, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i - 10)]++;
      });
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << "threads=" << threads << " i=" << i;
    }
  EXPECT_THROW(detail::parallel_for(0, 100, 4, [](int64_t b, int64_t) {
                 if (b > 0) throw std::runtime_error("chunk failed");
               }),
               std::runtime_error);
  EXPECT_GE(detail::resolve_threads(0), 1);
  EXPECT_EQ(detail::resolve_threads(3), 3);
}

}  // namespace
