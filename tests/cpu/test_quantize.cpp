// Tests of the host quantizers (include/lowbit/quantize.hpp): the documented rules, error
// bounds, round trips, determinism and edge cases, for every format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"

namespace {

using namespace lowbit;

constexpr ZeroPoint kZeroModes[] = {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat};
constexpr int kGroups[] = {32, 64, 128, 0};
constexpr DType kScaleDTypes[] = {DType::kF16, DType::kBF16, DType::kF32};
constexpr Fp8Scaling kScalings[] = {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow,
                                    Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128};
constexpr int64_t kEdges[] = {1, 2, 3, 15, 17, 63, 65, 127, 129};

uint32_t g_seed = 5000;  // each case draws the next seed: fresh data, printed on failure

const char* zero_name(ZeroPoint z) {
  return z == ZeroPoint::kSymmetric ? "sym" : z == ZeroPoint::kInteger ? "int-zero" : "float-zero";
}

// Relative half-spacing of the scale dtype: |round_to(t, x) - x| <= x * unit_roundoff(t).
double unit_roundoff(DType t) {
  return t == DType::kF16 ? std::ldexp(1.0, -11) : t == DType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
}

// Rows with a random magnitude and, for the zero-point modes, a random offset.
std::vector<float> random_weights(int64_t n, int64_t k, bool offset, std::mt19937& rng) {
  std::vector<float> w(static_cast<size_t>(n * k));
  std::uniform_real_distribution<float> mag_exp(-3.0f, 1.0f), shift(-1.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t r = 0; r < n; ++r) {
    const float mag = std::pow(10.0f, mag_exp(rng));
    const float mean = offset ? shift(rng) * 2.0f * mag : 0.0f;
    for (int64_t c = 0; c < k; ++c) w[r * k + c] = mean + mag * normal(rng);
  }
  return w;
}

// The header's rules, transcribed for one group (the spec oracle).
struct GroupParams {
  float s, z;
  std::vector<uint8_t> q;
};
GroupParams spec_group(const std::vector<float>& x, const IntWeightFormat& f) {
  const DType sdt = f.scale_dtype;
  const float tiny = sdt == DType::kF16 ? std::ldexp(1.0f, -14) : FLT_MIN;
  const float big = sdt == DType::kF16 ? 65504.0f : sdt == DType::kBF16 ? bf16_to_f32(0x7F7F) : FLT_MAX;
  auto fix = [&](float s) { s = round_to(sdt, s); return s == 0 ? tiny : std::isinf(s) ? big : s; };
  const int b = f.bits;
  const float maxq = static_cast<float>((1 << b) - 1), half = static_cast<float>(1 << (b - 1));
  float mn = x.empty() ? 0.0f : x[0], mx = mn, amax = 0.0f;
  for (float v : x) mn = std::min(mn, v), mx = std::max(mx, v), amax = std::max(amax, std::fabs(v));
  GroupParams p{};
  for (float v : x) {
    float q;
    if (f.zero == ZeroPoint::kSymmetric) {
      p.s = fix(amax / (b == 1 ? 1.0f : half - 1.0f));
      p.z = half;
      q = std::clamp(std::nearbyint(v / p.s), -half, half - 1.0f) + half;
    } else if (f.zero == ZeroPoint::kInteger) {
      const float lo = std::min(mn, 0.0f), hi = std::max(mx, 0.0f);
      p.s = fix((hi - lo) / maxq);
      p.z = std::clamp(std::nearbyint(-lo / p.s), 0.0f, maxq);
      q = std::clamp(std::nearbyint(v / p.s) + p.z, 0.0f, maxq);
    } else {
      p.s = fix((mx - mn) / maxq);
      p.z = round_to(sdt, -mn / p.s);
      q = std::clamp(std::nearbyint(v / p.s + p.z), 0.0f, maxq);
    }
    p.q.push_back(static_cast<uint8_t>(q));
  }
  return p;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Quantizes one random case of `f` and checks everything the quantizer promises.
// Adds to `applies` the groups where the round trip is checked, to `total` all groups.
void check_int_case(const IntWeightFormat& f, int64_t n, int64_t k, int& applies, int& total) {
  const uint32_t seed = g_seed++;
  std::mt19937 rng(seed);
  const std::string where = f.name() + " " + zero_name(f.zero) + " scale=" + dtype_name(f.scale_dtype) +
                            " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                            " seed=" + std::to_string(seed);
  SCOPED_TRACE(where);
  const std::vector<float> w = random_weights(n, k, f.zero != ZeroPoint::kSymmetric, rng);
  std::vector<int32_t> g_idx;
  const int64_t groups = f.group_size ? k / f.group_size : 1;
  if (f.act_order)
    for (int64_t c = 0; c < k; ++c) g_idx.push_back(static_cast<int32_t>(rng() % groups));
  const int32_t* gi = f.act_order ? g_idx.data() : nullptr;

  const IntWeight q = quantize_int(w.data(), n, k, f, gi);
  const Status st = q.validate();  // codes in range, scales/zeros representable, sizes
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(q.format, f);
  EXPECT_EQ(q.groups(), groups);

  // Bit-for-bit deterministic.
  const IntWeight q2 = quantize_int(w.data(), n, k, f, gi);
  EXPECT_EQ(q2.codes, q.codes);
  EXPECT_TRUE(same_bits(q2.scales, q.scales));
  EXPECT_EQ(q2.zeros, q.zeros);
  EXPECT_TRUE(same_bits(q2.zeros_f, q.zeros_f));

  // The rules, group by group.
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<float> xs;
      std::vector<int64_t> cols;
      for (int64_t c = 0; c < k; ++c)
        if (q.group_of(c) == g) xs.push_back(w[r * k + c]), cols.push_back(c);
      const GroupParams p = spec_group(xs, f);
      ASSERT_EQ(q.scales[r * groups + g], p.s) << "row " << r << " group " << g;
      ASSERT_EQ(q.zero_of(r, g), p.z) << "row " << r << " group " << g;
      for (size_t i = 0; i < cols.size(); ++i)
        ASSERT_EQ(q.codes[r * k + cols[i]], p.q[i]) << "row " << r << " col " << cols[i];
    }

  // Error bounds. Within the grid [(0 - z) s, (2^b - 1 - z) s] the error is at most s/2;
  // outside it the value is the nearest end. Overall the grid misses the data by at most
  // the rounding of s (and of a float z) to the scale dtype.
  const double u = unit_roundoff(f.scale_dtype) * 1.01;
  const double maxq = f.max_code();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      const int64_t g = q.group_of(c);
      const double s = q.scales[r * groups + g], z = q.zero_of(r, g);
      const double x = w[r * k + c], deq = q.dequant(r, c);
      const double slack = s * 1e-4 + std::fabs(x) * 1e-6;
      const double grid_lo = (0.0f - static_cast<float>(z)) * static_cast<float>(s);
      const double grid_hi = (static_cast<float>(maxq) - static_cast<float>(z)) * static_cast<float>(s);
      const double xc = std::clamp(x, grid_lo, grid_hi);
      ASSERT_LE(std::fabs(xc - deq), s / 2 + slack)
          << "row " << r << " col " << c << " x=" << x << " dequant=" << deq << " s=" << s << " z=" << z;
      if (f.zero == ZeroPoint::kSymmetric && f.bits == 1) continue;  // {-s, 0}: positives clip
      const double clip = maxq * s * u + (f.zero == ZeroPoint::kFloat ? std::fabs(z) * s * u : 0.0);
      ASSERT_LE(std::fabs(x - deq), s / 2 + clip + slack)
          << "row " << r << " col " << c << " x=" << x << " dequant=" << deq << " s=" << s << " z=" << z;
    }

  // Round trip: quantizing the dequantized weights gives the same codes. Always for the
  // symmetric rules; for the zero-point rules when the group's codes reach both ends of the
  // grid (otherwise the re-derived range, hence the scale, is smaller: not a fixed point).
  const std::vector<float> deq_all = [&] {
    std::vector<float> d(static_cast<size_t>(n * k));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) d[r * k + c] = q.dequant(r, c);
    return d;
  }();
  const IntWeight rq = quantize_int(deq_all.data(), n, k, f, gi);
  total += static_cast<int>(n * groups);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      int qmin = 255, qmax_seen = 0;
      for (int64_t c = 0; c < k; ++c)
        if (q.group_of(c) == g) {
          qmin = std::min<int>(qmin, q.codes[r * k + c]);
          qmax_seen = std::max<int>(qmax_seen, q.codes[r * k + c]);
        }
      bool fixed_point = true;
      const float z = q.zero_of(r, g);
      if (f.zero == ZeroPoint::kInteger)
        fixed_point = (qmin == 0 || z == 0.0f) && (qmax_seen == f.max_code() || z == f.max_code());
      if (f.zero == ZeroPoint::kFloat) fixed_point = qmin == 0 && qmax_seen == f.max_code();
      if (!fixed_point) continue;
      ++applies;
      for (int64_t c = 0; c < k; ++c) {
        if (q.group_of(c) != g) continue;
        ASSERT_EQ(rq.codes[r * k + c], q.codes[r * k + c]) << "round trip, row " << r << " col " << c;
      }
    }
}

// ---------------------------------------------------------------------------------------
void sweep_int(bool act_order) {
  int cases = 0, applies = 0, total = 0;
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : kGroups)
      for (ZeroPoint zero : kZeroModes)
        for (DType sdt : kScaleDTypes) {
          if (act_order && group == 0) continue;
          IntWeightFormat f;
          f.bits = bits;
          f.group_size = group;
          f.zero = zero;
          f.scale_dtype = sdt;
          f.act_order = act_order;
          const int64_t n = kEdges[cases % 5];  // 1, 2, 3, 15, 17
          const int64_t k = group ? group * (1 + cases % 3) : kEdges[cases % 9];
          check_int_case(f, n, k, applies, total);
          ++cases;
          if (::testing::Test::HasFatalFailure()) return;
        }
  // The round trip is checked on most groups (a guard against a vacuous test).
  EXPECT_GT(applies, total * 3 / 4) << applies << " of " << total;
}

TEST(Quantize, int_every_bits_group_zero_mode_scale_dtype) { sweep_int(false); }
TEST(Quantize, int_act_order_random_g_idx_every_combination) { sweep_int(true); }

TEST(Quantize, int_all_zero_groups_give_smallest_normal_scale) {
  for (int bits = 1; bits <= 8; ++bits)
    for (ZeroPoint zero : kZeroModes)
      for (DType sdt : kScaleDTypes) {
        IntWeightFormat f;
        f.bits = bits;
        f.zero = zero;
        f.group_size = 32;
        f.scale_dtype = sdt;
        // Row 0: all zero. Row 1: group 1 zero, the others not.
        std::vector<float> w(2 * 96, 0.0f);
        for (int c = 0; c < 96; ++c)
          if (c / 32 != 1) w[96 + c] = 0.01f * static_cast<float>(c % 7) - 0.02f;
        const IntWeight q = quantize_int(w.data(), 2, 96, f);
        SCOPED_TRACE(f.name() + " " + zero_name(zero) + " " + dtype_name(sdt));
        ASSERT_TRUE(q.validate().ok()) << q.validate().message();
        const float tiny = sdt == DType::kF16 ? std::ldexp(1.0f, -14) : FLT_MIN;
        for (int g : {0, 1, 2}) EXPECT_EQ(q.scales[g], tiny) << "group " << g;
        EXPECT_EQ(q.scales[3 + 1], tiny);
        const int offset = zero == ZeroPoint::kSymmetric ? f.symmetric_zero() : 0;
        for (int c = 0; c < 96; ++c) EXPECT_EQ(q.codes[c], offset) << "col " << c;
        for (int c = 32; c < 64; ++c) EXPECT_EQ(q.codes[96 + c], offset) << "col " << c;
        for (int c = 0; c < 96; ++c) EXPECT_EQ(q.dequant(0, c), 0.0f);
        if (zero == ZeroPoint::kInteger) {
          EXPECT_EQ(q.zeros[0], 0);
        }
        if (zero == ZeroPoint::kFloat) {
          EXPECT_EQ(std::signbit(q.zeros_f[0]), false);  // +0, not -0
        }
      }
}

// Data exactly on a grid comes back as that grid: scale, zero point and codes.
TEST(Quantize, int_known_answer_on_grid_data) {
  for (int bits = 1; bits <= 8; ++bits)
    for (ZeroPoint zero : kZeroModes)
      for (DType sdt : kScaleDTypes) {
        IntWeightFormat f;
        f.bits = bits;
        f.zero = zero;
        f.group_size = 64;
        f.scale_dtype = sdt;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        SCOPED_TRACE(f.name() + " " + zero_name(zero) + " " + dtype_name(sdt) + " seed=" + std::to_string(seed));
        const int maxq = f.max_code(), n = 3, k = 128;
        std::vector<float> w(n * k), s(n * 2), z(n * 2);
        std::vector<uint8_t> codes(n * k);
        for (int i = 0; i < n * 2; ++i) {
          // Scales on the f16 grid (few bits: every product below is exact).
          s[i] = round_to(DType::kF16, std::ldexp(1.0f + static_cast<float>(rng() % 64) / 64.0f,
                                                 -static_cast<int>(rng() % 12)));
          if (zero == ZeroPoint::kSymmetric) z[i] = static_cast<float>(f.symmetric_zero());
          if (zero == ZeroPoint::kInteger) z[i] = static_cast<float>(rng() % (maxq + 1));
          // Quarter steps in [0, maxq], rounded to the scale dtype: (q - z) * s stays exact.
          if (zero == ZeroPoint::kFloat)
            z[i] = round_to(sdt, static_cast<float>(rng() % (4 * maxq + 1)) / 4.0f);
        }
        for (int r = 0; r < n; ++r)
          for (int c = 0; c < k; ++c) {
            const int i = r * 2 + c / 64;
            int q;
            if (zero == ZeroPoint::kSymmetric) {
              // Codes 1..2^b - 1 (the extra negative code -2^(b-1) is never produced), and
              // one element at +-qmax so that amax / qmax = s.
              const int qmax = bits == 1 ? 1 : (1 << (bits - 1)) - 1;
              q = c % 64 == 0 ? (rng() & 1 || bits == 1 ? f.symmetric_zero() - qmax : f.symmetric_zero() + qmax)
                              : (bits == 1 ? static_cast<int>(rng() % 2) : 1 + static_cast<int>(rng() % maxq));
            } else {
              q = c % 64 == 0 ? 0 : c % 64 == 1 ? maxq : static_cast<int>(rng() % (maxq + 1));
            }
            codes[r * k + c] = static_cast<uint8_t>(q);
            w[r * k + c] = (static_cast<float>(q) - z[i]) * s[i];
          }
        const IntWeight q = quantize_int(w.data(), n, k, f);
        ASSERT_TRUE(q.validate().ok()) << q.validate().message();
        for (int i = 0; i < n * 2; ++i) {
          EXPECT_EQ(q.scales[i], s[i]) << "group " << i;
          EXPECT_EQ(q.zero_of(i / 2, i % 2), z[i]) << "group " << i;
        }
        EXPECT_EQ(q.codes, codes);
      }
}

TEST(Quantize, int_rejects_bad_input) {
  IntWeightFormat f;  // w4g128
  std::vector<float> w(2 * 256, 0.5f);
  EXPECT_THROW(quantize_int(w.data(), 2, 200, f), Error);  // K not a multiple of 128
  EXPECT_THROW(quantize_int(w.data(), 0, 256, f), Error);
  EXPECT_THROW(quantize_int(nullptr, 2, 256, f), Error);
  std::vector<int32_t> g_idx(256, 0);
  EXPECT_THROW(quantize_int(w.data(), 2, 256, f, g_idx.data()), Error);  // g_idx without act
  f.act_order = true;
  EXPECT_THROW(quantize_int(w.data(), 2, 256, f), Error);  // act without g_idx
  g_idx[7] = 2;
  EXPECT_THROW(quantize_int(w.data(), 2, 256, f, g_idx.data()), Error);  // group out of range
  f.act_order = false;
  f.bits = 9;
  EXPECT_THROW(quantize_int(w.data(), 2, 256, f), Error);
  f.bits = 4;
  w[300] = std::numeric_limits<float>::quiet_NaN();
  try {
    (void)quantize_int(w.data(), 2, 256, f);
    ADD_FAILURE() << "NaN input accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, col 44"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------
// Spacing of the fp8 grid around |y| (the binade's step; subnormal step below the normals).
double fp8_spacing(DType t, double y) {
  const int mbits = t == DType::kE4M3 ? 3 : 2, emin = t == DType::kE4M3 ? -6 : -14;
  const int e = y == 0 ? emin : std::max(std::ilogb(y), emin);
  return std::ldexp(1.0, e - mbits);
}

TEST(Quantize, fp8_every_scaling_and_dtype_error_within_half_ulp) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {3, 17}, {200, 300}, {129, 127}, {65, 257}, {2, 129}};
  for (Fp8Scaling sc : kScalings)
    for (DType t : {DType::kE4M3, DType::kE5M2})
      for (auto [rows, cols] : shapes) {
        Fp8Format f;
        f.dtype = t;
        f.scaling = sc;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        SCOPED_TRACE(f.name() + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                     " seed=" + std::to_string(seed));
        std::vector<float> x = random_weights(rows, cols, true, rng);
        if (rows * cols > 200) std::fill(x.begin(), x.begin() + 130, 0.0f);  // a zero block/row
        const Fp8Tensor q = quantize_fp8(x.data(), rows, cols, f);
        ASSERT_TRUE(q.validate().ok()) << q.validate().message();
        const Fp8Tensor q2 = quantize_fp8(x.data(), rows, cols, f);
        EXPECT_EQ(q2.codes, q.codes);
        EXPECT_TRUE(same_bits(q2.scales, q.scales));
        // Scale grid and the rules: s = max(amax, 1e-4) / fp8_max, code = sat_rne(x * fp8_max / amax').
        const int64_t br = sc == Fp8Scaling::kPerTensor ? rows : sc == Fp8Scaling::kBlock128x128 ? 128 : 1;
        const int64_t bc = sc == Fp8Scaling::kBlock1x128 || sc == Fp8Scaling::kBlock128x128 ? 128 : cols;
        const int64_t srows = (rows + br - 1) / br, scols = (cols + bc - 1) / bc;
        ASSERT_EQ(q.scale_rows(), srows);
        ASSERT_EQ(q.scale_cols(), scols);
        std::vector<float> amax(srows * scols, 0.0f);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            float& a = amax[(r / br) * scols + c / bc];
            a = std::max(a, std::fabs(x[r * cols + c]));
          }
        const float fmax = t == DType::kE4M3 ? 448.0f : 57344.0f;
        for (size_t i = 0; i < amax.size(); ++i)
          ASSERT_EQ(q.scales[i], std::max(amax[i], 1e-4f) / fmax) << "scale " << i;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            const float a = std::max(amax[(r / br) * scols + c / bc], 1e-4f);
            const float v = x[r * cols + c] * (fmax / a);
            const uint8_t want = t == DType::kE4M3 ? f32_to_e4m3(v) : f32_to_e5m2(v);
            ASSERT_EQ(q.codes[r * cols + c], want) << r << "," << c;
            // |x - dequant| <= half an fp8 step (at x / s) times s.
            const double s = q.scale_of(r, c), xv = x[r * cols + c], deq = q.dequant(r, c);
            const double bound = 0.5 * fp8_spacing(t, std::fabs(xv) / s) * s + std::fabs(xv) * 1e-6 + 1e-30;
            ASSERT_LE(std::fabs(xv - deq), bound) << r << "," << c << " x=" << xv << " deq=" << deq;
          }
      }
}

TEST(Quantize, fp8_extremes_saturate_and_zero_blocks_use_1e_4) {
  for (DType t : {DType::kE4M3, DType::kE5M2}) {
    Fp8Format f;
    f.dtype = t;
    f.scaling = Fp8Scaling::kPerRow;
    const float fmax = t == DType::kE4M3 ? 448.0f : 57344.0f;
    const std::vector<float> x = {0, 0, 0, 3.0f, -3.0f, 1.5f, 1e-5f, 0, 0};  // rows of 3
    const Fp8Tensor q = quantize_fp8(x.data(), 3, 3, f);
    EXPECT_EQ(q.scales[0], 1e-4f / fmax);
    EXPECT_EQ(q.scales[2], 1e-4f / fmax);  // amax 1e-5 < 1e-4
    for (int c = 0; c < 3; ++c) EXPECT_EQ(q.codes[c], 0);
    EXPECT_EQ(t == DType::kE4M3 ? e4m3_to_f32(q.codes[3]) : e5m2_to_f32(q.codes[3]), fmax);
    EXPECT_EQ(t == DType::kE4M3 ? e4m3_to_f32(q.codes[4]) : e5m2_to_f32(q.codes[4]), -fmax);
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> bad = {1.0f, inf};
  EXPECT_THROW(quantize_fp8(bad.data(), 1, 2, Fp8Format{}), Error);
  Fp8Format wrong;
  wrong.dtype = DType::kF16;
  EXPECT_THROW(quantize_fp8(bad.data(), 1, 1, wrong), Error);
  EXPECT_THROW(quantize_fp8(bad.data(), 0, 1, Fp8Format{}), Error);
}

// ---------------------------------------------------------------------------------------
TEST(Quantize, int8_both_modes_rules_and_error_bound) {
  for (bool zp : {false, true})
    for (int64_t rows : {1, 3, 17, 65})
      for (int64_t cols : {1, 15, 129}) {
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        SCOPED_TRACE(std::string(zp ? "zero point" : "symmetric") + " rows=" + std::to_string(rows) +
                     " cols=" + std::to_string(cols) + " seed=" + std::to_string(seed));
        std::vector<float> x = random_weights(rows, cols, zp, rng);
        if (rows > 2) std::fill(x.begin() + cols, x.begin() + 2 * cols, 0.0f);  // a zero row
        const Int8Tensor q = quantize_int8(x.data(), rows, cols, zp);
        ASSERT_TRUE(q.validate().ok()) << q.validate().message();
        ASSERT_EQ(q.has_zero_point(), zp);
        const Int8Tensor q2 = quantize_int8(x.data(), rows, cols, zp);
        EXPECT_EQ(q2.codes, q.codes);
        EXPECT_TRUE(same_bits(q2.scales, q.scales));
        EXPECT_EQ(q2.zeros, q.zeros);
        for (int64_t r = 0; r < rows; ++r) {
          float lo = x[r * cols], hi = lo, amax = 0;
          for (int64_t c = 0; c < cols; ++c) {
            const float v = x[r * cols + c];
            lo = std::min(lo, v), hi = std::max(hi, v), amax = std::max(amax, std::fabs(v));
          }
          if (zp) lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);  // the range holds 0
          const float s = zp ? std::max(hi - lo, 1e-8f) / 255.0f : std::max(amax, 1e-8f) / 127.0f;
          ASSERT_EQ(q.scales[r], s) << "row " << r;
          if (zp) {
            ASSERT_EQ(q.zeros[r], static_cast<int32_t>(std::clamp(std::nearbyint(-128.0f - lo / s), -128.0f, 127.0f)));
          }
          for (int64_t c = 0; c < cols; ++c) {
            const int code = q.codes[r * cols + c];
            if (!zp) {
              ASSERT_GE(code, -127);
            }
            const double xv = x[r * cols + c];
            ASSERT_LE(std::fabs(xv - q.dequant(r, c)), s * (0.5 + 1e-4) + std::fabs(xv) * 1e-6)
                << "row " << r << " col " << c;
          }
        }
      }
  const std::vector<float> bad = {std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(quantize_int8(bad.data(), 1, 1, false), Error);
  EXPECT_THROW(quantize_int8(bad.data(), 1, -1, true), Error);
}

// ---------------------------------------------------------------------------------------
TEST(Quantize, to_f32_every_float_dtype) {
  const std::vector<float> v = {0.0f, -1.5f, 0.1f, 300.0f, -1e-3f};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kE4M3, DType::kE5M2, DType::kF64}) {
    std::vector<unsigned char> buf(v.size() * 8);
    for (size_t i = 0; i < v.size(); ++i) store_from_f32(buf.data(), t, static_cast<int64_t>(i), v[i]);
    const std::vector<float> got = to_f32(buf.data(), t, static_cast<int64_t>(v.size()));
    ASSERT_EQ(got.size(), v.size());
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(got[i], round_to(t, v[i])) << dtype_name(t) << " " << i;
  }
  EXPECT_TRUE(to_f32(nullptr, DType::kF16, 0).empty());
  int32_t ints[2] = {1, 2};
  EXPECT_THROW(to_f32(ints, DType::kI32, 2), Error);
}

}  // namespace
