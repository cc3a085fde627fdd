// Tests of the GPTQ / AWQ conventions (include/lowbit/import.hpp): one test per convention,
// with tensors built by hand from the published packing rules (not by export_*), then the
// round trips canonical -> checkpoint -> canonical, and the refusals.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "lowbit/import.hpp"
#include "lowbit/quantize.hpp"

namespace {

using namespace lowbit;

uint32_t g_seed = 9000;

IntWeightFormat fmt(int bits, int group, ZeroPoint zero, bool act = false) {
  IntWeightFormat f;
  f.bits = bits;
  f.group_size = group;
  f.zero = zero;
  f.scale_dtype = DType::kF16;
  f.act_order = act;
  return f;
}

// Codes q(n, k) = (3n + 5k) mod 2^bits, zeros z(g, n) = (n + g) mod 2^bits (+1 so that v1
// can store them), scales 2^-(n % 4): recognisable values.
uint32_t code_at(int64_t n, int64_t k, int bits) { return static_cast<uint32_t>((3 * n + 5 * k) % (1 << bits)); }
uint32_t zero_at(int64_t g, int64_t n, int bits) { return static_cast<uint32_t>(1 + (n + g) % ((1 << bits) - 1)); }
float scale_at(int64_t g, int64_t n) { return 1.0f / static_cast<float>(1 << ((n + g) % 4)); }

// GPTQ by its rule: qweight[k / p][n] holds code (n, k) at bits (k % p) * bits;
// qzeros[g][n / p] holds the stored zero at bits (n % p) * bits.
GptqTensors gptq_by_hand(int bits, int group, int64_t n, int64_t k, bool v1) {
  const int p = 32 / bits;
  const int64_t groups = group <= 0 ? 1 : k / group;
  GptqTensors t;
  t.bits = bits;
  t.group_size = group;
  t.n = n;
  t.k = k;
  t.qweight.assign(static_cast<size_t>(k / p * n), 0);
  t.qzeros.assign(static_cast<size_t>(groups * n / p), 0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t c = 0; c < n; ++c)
      t.qweight[static_cast<size_t>(kk / p * n + c)] |= static_cast<int32_t>(code_at(c, kk, bits) << ((kk % p) * bits));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) {
      const uint32_t stored = zero_at(g, c, bits) - (v1 ? 1 : 0);
      t.qzeros[static_cast<size_t>(g * n / p + c / p)] |= static_cast<int32_t>(stored << ((c % p) * bits));
    }
  t.scales.assign(static_cast<size_t>(groups * n), 0.0f);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) t.scales[static_cast<size_t>(g * n + c)] = scale_at(g, c);
  return t;
}

void expect_canonical(const IntWeight& w, int bits, int group) {
  const int64_t groups = group <= 0 ? 1 : w.k / group;
  for (int64_t c = 0; c < w.n; ++c) {
    for (int64_t kk = 0; kk < w.k; ++kk)
      ASSERT_EQ(w.codes[static_cast<size_t>(c * w.k + kk)], code_at(c, kk, bits)) << "n " << c << " k " << kk;
    for (int64_t g = 0; g < groups; ++g) {
      ASSERT_EQ(w.zeros[static_cast<size_t>(c * groups + g)], zero_at(g, c, bits)) << "n " << c << " g " << g;
      ASSERT_EQ(w.scales[static_cast<size_t>(c * groups + g)], scale_at(g, c));
    }
  }
}

TEST(import_gptq, v1_w4_zero_offset_one) {
  const GptqTensors t = gptq_by_hand(4, 32, 16, 64, /*v1=*/true);
  // Spot check of the packing rule itself: code (n=3, k=10) = (9 + 50) % 16 = 11 sits in
  // qweight[10 / 8][3] at bits 8..11; the zero of (g=1, n=5) is 7, stored as 6 at bits 20..23
  // of qzeros[1][0].
  EXPECT_EQ((static_cast<uint32_t>(t.qweight[1 * 16 + 3]) >> 8) & 15, 11u);
  EXPECT_EQ((static_cast<uint32_t>(t.qzeros[1 * 2 + 0]) >> 20) & 15, 6u);
  const IntWeight w = import_gptq(t, GptqZeros::kV1, fmt(4, 32, ZeroPoint::kInteger));
  expect_canonical(w, 4, 32);
}

TEST(import_gptq, v2_w4_zero_stored_as_is) {
  const GptqTensors t = gptq_by_hand(4, 64, 32, 128, /*v1=*/false);
  expect_canonical(import_gptq(t, GptqZeros::kV2, fmt(4, 64, ZeroPoint::kInteger)), 4, 64);
  // Read as v1 the same tensor is off by one: every zero point one larger (or refused).
  EXPECT_THROW(import_gptq(t, GptqZeros::kV1, fmt(4, 64, ZeroPoint::kInteger)), Error);
}

TEST(import_gptq, v1_w8_four_codes_per_int32) {
  const GptqTensors t = gptq_by_hand(8, 128, 16, 256, true);
  // code (n=2, k=7) = (6 + 35) % 256 = 41 in qweight[7 / 4][2] at bits 24..31.
  EXPECT_EQ(static_cast<uint32_t>(t.qweight[1 * 16 + 2]) >> 24, 41u);
  expect_canonical(import_gptq(t, GptqZeros::kV1, fmt(8, 128, ZeroPoint::kInteger)), 8, 128);
}

TEST(import_gptq, v1_symmetric_stores_seven) {
  // sym=True checkpoints: z = 8 stored as 7 in every nibble (0x77777777).
  GptqTensors t = gptq_by_hand(4, 32, 16, 64, true);
  for (auto& q : t.qzeros) q = 0x77777777;
  const IntWeight w = import_gptq(t, GptqZeros::kV1, fmt(4, 32, ZeroPoint::kSymmetric));
  EXPECT_TRUE(w.zeros.empty());
  EXPECT_EQ(w.dequant(0, 0), (static_cast<float>(code_at(0, 0, 4)) - 8.0f) * scale_at(0, 0));
  // A symmetric target refuses a checkpoint whose zero points are not 8.
  t.qzeros[0] = 0x77777776;
  EXPECT_THROW(import_gptq(t, GptqZeros::kV1, fmt(4, 32, ZeroPoint::kSymmetric)), Error);
}

TEST(import_gptq, v1_all_ones_zero_is_refused) {
  // Stored 15 means z = 16 in v1, which no 4-bit code reaches.
  GptqTensors t = gptq_by_hand(4, 32, 16, 64, true);
  t.qzeros[0] |= 0xF;
  try {
    (void)import_gptq(t, GptqZeros::kV1, fmt(4, 32, ZeroPoint::kInteger));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("zero point 16"), std::string::npos) << e.what();
  }
}

TEST(import_gptq, per_channel_group_minus_one) {
  const GptqTensors t = gptq_by_hand(4, -1, 16, 128, true);
  expect_canonical(import_gptq(t, GptqZeros::kV1, fmt(4, 0, ZeroPoint::kInteger)), 4, 0);
}

TEST(import_gptq, act_order_g_idx) {
  GptqTensors t = gptq_by_hand(4, 32, 16, 128, false);
  std::mt19937 rng(++g_seed);
  t.g_idx.resize(128);
  for (int c = 0; c < 128; ++c) t.g_idx[static_cast<size_t>(c)] = c / 32;
  std::shuffle(t.g_idx.begin(), t.g_idx.end(), rng);
  const IntWeight w = import_gptq(t, GptqZeros::kV2, fmt(4, 32, ZeroPoint::kInteger, true));
  EXPECT_EQ(w.g_idx, t.g_idx);
  // The dequantized value of column c uses group g_idx[c].
  const int64_t c = 77, g = t.g_idx[77];
  EXPECT_EQ(w.dequant(5, c), (static_cast<float>(code_at(5, c, 4)) - static_cast<float>(zero_at(g, 5, 4))) * scale_at(g, 5));
  // Without act-order in the target, a permuted g_idx is refused; the trivial one is fine.
  EXPECT_THROW(import_gptq(t, GptqZeros::kV2, fmt(4, 32, ZeroPoint::kInteger)), Error);
  for (int cc = 0; cc < 128; ++cc) t.g_idx[static_cast<size_t>(cc)] = cc / 32;
  EXPECT_NO_THROW(import_gptq(t, GptqZeros::kV2, fmt(4, 32, ZeroPoint::kInteger)));
}

TEST(import_gptq, roundtrip_quantized_weights) {
  std::mt19937 rng(++g_seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int bits : {4, 8})
    for (int group : {32, 128, 0})
      for (GptqZeros zf : {GptqZeros::kV1, GptqZeros::kV2}) {
        std::vector<float> x(64 * 256);
        for (auto& v : x) v = normal(rng) + 0.5f;
        const IntWeightFormat f = fmt(bits, group, ZeroPoint::kInteger);
        IntWeight w = quantize_int(x.data(), 64, 256, f);
        for (auto& z : w.zeros) z = z == 0 ? 1 : z;  // v1 cannot store 0
        const IntWeight back = import_gptq(export_gptq(w, zf), zf, f);
        EXPECT_EQ(back.codes, w.codes);
        EXPECT_EQ(back.zeros, w.zeros);
        EXPECT_EQ(back.scales, w.scales);
      }
}

// AWQ by its rule: qweight[k][c] nibble i holds column 8c + kAwqOrder[i].
TEST(import_awq, nibble_order_0_2_4_6_1_3_5_7) {
  const int64_t n = 16, k = 64, groups = 2;
  AwqTensors t;
  t.bits = 4;
  t.group_size = 32;
  t.n = n;
  t.k = k;
  t.qweight.assign(static_cast<size_t>(k * n / 8), 0);
  t.qzeros.assign(static_cast<size_t>(groups * n / 8), 0);
  const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t c = 0; c < n / 8; ++c)
      for (int i = 0; i < 8; ++i)
        t.qweight[static_cast<size_t>(kk * (n / 8) + c)] |= static_cast<int32_t>(code_at(8 * c + order[i], kk, 4) << (4 * i));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n / 8; ++c)
      for (int i = 0; i < 8; ++i)
        t.qzeros[static_cast<size_t>(g * (n / 8) + c)] |= static_cast<int32_t>(zero_at(g, 8 * c + order[i], 4) << (4 * i));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) t.scales.push_back(scale_at(g, c));
  // With codes 0..7 in columns 0..7 a word reads 0x75316420.
  AwqTensors ramp = t;
  ramp.qweight[0] = 0;
  for (int i = 0; i < 8; ++i) ramp.qweight[0] |= order[i] << (4 * i);
  EXPECT_EQ(static_cast<uint32_t>(ramp.qweight[0]), 0x75316420u);
  const IntWeight w = import_awq(t, fmt(4, 32, ZeroPoint::kInteger));
  expect_canonical(w, 4, 32);
  const IntWeight r = import_awq(ramp, fmt(4, 32, ZeroPoint::kInteger));
  for (int c = 0; c < 8; ++c) EXPECT_EQ(r.codes[static_cast<size_t>(c * k)], c);
}

TEST(import_awq, roundtrip_and_refusals) {
  std::mt19937 rng(++g_seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(32 * 256);
  for (auto& v : x) v = normal(rng) - 0.3f;
  const IntWeightFormat f = fmt(4, 64, ZeroPoint::kInteger);
  const IntWeight w = quantize_int(x.data(), 32, 256, f);
  const IntWeight back = import_awq(export_awq(w), f);
  EXPECT_EQ(back.codes, w.codes);
  EXPECT_EQ(back.zeros, w.zeros);
  EXPECT_EQ(back.scales, w.scales);
  AwqTensors t = export_awq(w);
  t.bits = 8;
  EXPECT_THROW(import_awq(t, fmt(8, 64, ZeroPoint::kInteger)), Error);
  EXPECT_THROW(import_awq(export_awq(w), fmt(4, 128, ZeroPoint::kInteger)), Error);  // group mismatch
}

}  // namespace
