// Tests of the format types (include/lowbit/formats.hpp): names, parsing, element access
// and validate(), which must catch every kind of corruption with a message naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/numeric.hpp"

namespace {

using namespace lowbit;

constexpr ZeroPoint kZeroModes[] = {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat};
constexpr int kGroups[] = {0, 32, 64, 128};
constexpr Fp8Scaling kScalings[] = {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow,
                                    Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128};

// Asserts that `s` failed with a "lowbit: " message containing every one of `parts`.
void expect_fail(const Status& s, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok()) << "expected a failure mentioning " << *parts.begin();
  EXPECT_EQ(s.message().rfind("lowbit: ", 0), 0u) << s.message();
  for (const std::string& p : parts)
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "message \"" << s.message() << "\" lacks \"" << p << "\"";
}

IntWeightFormat make_format(int bits, int group, ZeroPoint zero, bool act,
                            DType sdt = DType::kF16) {
  IntWeightFormat f;
  f.bits = bits;
  f.group_size = group;
  f.zero = zero;
  f.act_order = act;
  f.scale_dtype = sdt;
  return f;
}

// A valid weight with random codes, representable scales and zero points.
IntWeight make_weight(const IntWeightFormat& f, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  IntWeight w;
  w.format = f;
  w.n = n;
  w.k = k;
  const int64_t g = w.groups();
  w.codes.resize(static_cast<size_t>(n * k));
  for (auto& c : w.codes) c = static_cast<uint8_t>(rng() % (1u << f.bits));
  std::uniform_real_distribution<float> scale_dist(0.001f, 0.1f), zero_dist(-8.0f, 8.0f);
  w.scales.resize(static_cast<size_t>(n * g));
  for (auto& s : w.scales) s = round_to(f.scale_dtype, scale_dist(rng));
  if (f.zero == ZeroPoint::kInteger) {
    w.zeros.resize(static_cast<size_t>(n * g));
    for (auto& z : w.zeros) z = static_cast<uint8_t>(rng() % (1u << f.bits));
  }
  if (f.zero == ZeroPoint::kFloat) {
    w.zeros_f.resize(static_cast<size_t>(n * g));
    for (auto& z : w.zeros_f) z = round_to(f.scale_dtype, zero_dist(rng));
  }
  if (f.act_order) {
    w.g_idx.resize(static_cast<size_t>(k));
    for (auto& x : w.g_idx) x = static_cast<int32_t>(rng() % g);
  }
  return w;
}

// ---------------------------------------------------------------------------------------
TEST(Formats, int_format_name_parse_roundtrip_every_combination) {
  int valid = 0;
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : kGroups)
      for (ZeroPoint zero : kZeroModes)
        for (bool act : {false, true}) {
          const IntWeightFormat f = make_format(bits, group, zero, act);
          // The expected name, spelled out independently of name().
          std::string want = "w" + std::to_string(bits);
          if (group) want += "g" + std::to_string(group);
          if (zero == ZeroPoint::kInteger) want += "-asym";
          if (zero == ZeroPoint::kFloat) want += "-fzp";
          if (act) want += "-act";
          EXPECT_EQ(f.name(), want);
          const auto parsed = IntWeightFormat::parse(want);
          if (act && group == 0) {
            EXPECT_FALSE(f.validate().ok()) << want;
            EXPECT_FALSE(parsed.has_value()) << want;
            continue;
          }
          EXPECT_TRUE(f.validate().ok()) << want << ": " << f.validate().message();
          ASSERT_TRUE(parsed.has_value()) << want;
          EXPECT_EQ(*parsed, f) << want;
          EXPECT_EQ(parsed->name(), want);
          ++valid;
        }
  EXPECT_EQ(valid, 8 * 4 * 3 * 2 - 8 * 3);
}

TEST(Formats, int_format_documented_names) {
  EXPECT_EQ(make_format(4, 128, ZeroPoint::kSymmetric, false).name(), "w4g128");
  EXPECT_EQ(make_format(4, 128, ZeroPoint::kInteger, false).name(), "w4g128-asym");
  EXPECT_EQ(make_format(3, 64, ZeroPoint::kFloat, false).name(), "w3g64-fzp");
  EXPECT_EQ(make_format(8, 0, ZeroPoint::kSymmetric, false).name(), "w8");
  EXPECT_EQ(make_format(4, 128, ZeroPoint::kSymmetric, true).name(), "w4g128-act");
  // The scale dtype is not part of the name; parse gives the default f16.
  EXPECT_EQ(make_format(4, 128, ZeroPoint::kSymmetric, false, DType::kBF16).name(), "w4g128");
  EXPECT_EQ(IntWeightFormat::parse("w4g128")->scale_dtype, DType::kF16);
  EXPECT_EQ(IntWeightFormat::parse("w2-asym")->group_size, 0);
}

TEST(Formats, int_format_parse_rejects_bad_text) {
  for (const char* text :
       {"", "w", "w0", "w9", "w10", "w4g", "w4g0", "w4g48", "w4g256", "w4g16", "W4g128",
        "w4G128", "w4g128-", "w4g128-sym", "w4g128-act-asym", "w4-act", "w04g128", "w4g0128",
        "w4 g128", "w4g128 ", " w4g128", "int4", "w4g128-asym-asym", "w4g128-asym-fzp", "w-4",
        "w4g-128", "w4g128-act-act", "w99999999999999", "w4g99999999999", "w4g128x", "4g128",
        "w4g128-ACT", "w+4"}) {
    EXPECT_FALSE(IntWeightFormat::parse(text).has_value()) << '"' << text << '"';
  }
}

TEST(Formats, int_format_validate_names_each_problem) {
  expect_fail(make_format(0, 128, ZeroPoint::kSymmetric, false).validate(), {"bits=0", "1..8"});
  expect_fail(make_format(9, 128, ZeroPoint::kSymmetric, false).validate(), {"bits=9", "w9g128"});
  expect_fail(make_format(4, 48, ZeroPoint::kSymmetric, false).validate(),
              {"group_size=48", "32, 64, 128"});
  expect_fail(make_format(4, 128, ZeroPoint::kSymmetric, false, DType::kE4M3).validate(),
              {"scale_dtype=e4m3", "f16, bf16 or f32"});
  expect_fail(make_format(4, 128, ZeroPoint::kSymmetric, false, DType::kI8).validate(),
              {"scale_dtype=i8"});
  expect_fail(make_format(4, 0, ZeroPoint::kSymmetric, true).validate(), {"act_order", "per-channel"});
  expect_fail(make_format(4, 128, static_cast<ZeroPoint>(7), false).validate(), {"zero point mode 7"});
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32})
    EXPECT_TRUE(make_format(4, 128, ZeroPoint::kSymmetric, false, t).validate().ok());
}

// ---------------------------------------------------------------------------------------
TEST(Formats, fp8_format_name_parse_roundtrip_every_combination) {
  const char* want_scaling[] = {"tensor", "row", "1x128", "128x128"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_STREQ(fp8_scaling_name(kScalings[i]), want_scaling[i]);
    EXPECT_EQ(parse_fp8_scaling(want_scaling[i]), kScalings[i]);
    for (DType t : {DType::kE4M3, DType::kE5M2}) {
      Fp8Format f;
      f.dtype = t;
      f.scaling = kScalings[i];
      const std::string want =
          std::string("fp8-") + want_scaling[i] + (t == DType::kE5M2 ? "-e5m2" : "");
      EXPECT_TRUE(f.validate().ok());
      EXPECT_EQ(f.name(), want);
      const auto parsed = Fp8Format::parse(want);
      ASSERT_TRUE(parsed.has_value()) << want;
      EXPECT_EQ(*parsed, f);
    }
  }
  EXPECT_EQ(Fp8Format::parse("fp8-row-e4m3")->dtype, DType::kE4M3);  // explicit default
}

TEST(Formats, fp8_format_parse_rejects_bad_text) {
  for (const char* text : {"", "fp8", "fp8-", "fp8-col", "fp8-row-e5m3", "fp8-e5m2", "FP8-row",
                           "fp8-128x128-e5m2-e5m2", "fp8-1x128x", "fp8-row-", "fp8-128",
                           "fp8-tensor ", "fp8--row", "fp8-row-e4m3-e5m2", "fp8-64x64"})
    EXPECT_FALSE(Fp8Format::parse(text).has_value()) << '"' << text << '"';
  for (const char* text : {"", "col", "Row", "128x1"})
    EXPECT_FALSE(parse_fp8_scaling(text).has_value()) << '"' << text << '"';
}

TEST(Formats, fp8_format_validate_names_each_problem) {
  Fp8Format f;
  f.dtype = DType::kF16;
  expect_fail(f.validate(), {"dtype=f16", "e4m3 or e5m2"});
  f.dtype = DType::kE4M3;
  f.scaling = static_cast<Fp8Scaling>(9);
  expect_fail(f.validate(), {"scaling 9"});
}

// ---------------------------------------------------------------------------------------
TEST(Formats, int_weight_groups_zero_of_and_dequant) {
  uint32_t seed = 11;
  for (ZeroPoint zero : kZeroModes)
    for (int group : kGroups)
      for (bool act : {false, true}) {
        if (act && group == 0) continue;
        const IntWeightFormat f = make_format(4, group, zero, act);
        const int64_t n = 3, k = 256;
        const IntWeight w = make_weight(f, n, k, ++seed);
        SCOPED_TRACE(f.name() + " seed " + std::to_string(seed));
        ASSERT_TRUE(w.validate().ok()) << w.validate().message();
        EXPECT_EQ(w.groups(), group == 0 ? 1 : k / group);
        for (int64_t r = 0; r < n; ++r)
          for (int64_t c = 0; c < k; ++c) {
            const int64_t g = act ? w.g_idx[c] : group == 0 ? 0 : c / group;
            ASSERT_EQ(w.group_of(c), g);
            const float z = zero == ZeroPoint::kSymmetric ? 8.0f
                            : zero == ZeroPoint::kInteger ? w.zeros[r * w.groups() + g]
                                                          : w.zeros_f[r * w.groups() + g];
            ASSERT_EQ(w.zero_of(r, g), z);
            const float want = (static_cast<float>(w.codes[r * k + c]) - z) * w.scales[r * w.groups() + g];
            ASSERT_EQ(w.dequant(r, c), want) << "row " << r << " col " << c;
          }
      }
}

TEST(Formats, int_weight_validate_message_for_k_not_multiple_of_group) {
  IntWeight w = make_weight(make_format(4, 128, ZeroPoint::kSymmetric, false), 2, 4096, 1);
  w.k = 4100;
  const Status s = w.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "lowbit: weight K=4100 is not a multiple of group_size=128 (w4g128)");
}

TEST(Formats, int_weight_validate_catches_each_corruption) {
  const IntWeightFormat sym = make_format(4, 64, ZeroPoint::kSymmetric, false);
  const IntWeightFormat asym = make_format(4, 64, ZeroPoint::kInteger, false);
  const IntWeightFormat fzp = make_format(3, 32, ZeroPoint::kFloat, false, DType::kBF16);
  const IntWeightFormat act = make_format(4, 64, ZeroPoint::kSymmetric, true);
  const int64_t n = 5, k = 128;
  auto fresh = [&](const IntWeightFormat& f) { return make_weight(f, n, k, 77); };
  for (const auto& f : {sym, asym, fzp, act}) ASSERT_TRUE(fresh(f).validate().ok()) << f.name();

  { IntWeight w = fresh(sym); w.format.bits = 9; expect_fail(w.validate(), {"bits=9"}); }
  { IntWeight w = fresh(sym); w.n = 0; expect_fail(w.validate(), {"N=0", "(w4g64)"}); }
  { IntWeight w = fresh(sym); w.k = -64; expect_fail(w.validate(), {"K=-64"}); }
  {
    IntWeight w = fresh(sym);
    w.n = int64_t{1} << 40;
    w.k = int64_t{1} << 30;
    expect_fail(w.validate(), {"overflows"});
  }
  { IntWeight w = fresh(sym); w.codes.pop_back(); expect_fail(w.validate(), {"codes has 639", "640"}); }
  { IntWeight w = fresh(sym); w.scales.push_back(1.0f); expect_fail(w.validate(), {"scales has 11", "10"}); }
  { IntWeight w = fresh(sym); w.zeros.assign(10, 0); expect_fail(w.validate(), {"zeros has 10", "expected 0"}); }
  { IntWeight w = fresh(sym); w.zeros_f.assign(10, 0); expect_fail(w.validate(), {"zeros_f has 10"}); }
  { IntWeight w = fresh(sym); w.g_idx.assign(k, 0); expect_fail(w.validate(), {"g_idx has 128", "act-order"}); }
  { IntWeight w = fresh(asym); w.zeros.pop_back(); expect_fail(w.validate(), {"zeros has 9", "10"}); }
  { IntWeight w = fresh(fzp); w.zeros_f.clear(); expect_fail(w.validate(), {"zeros_f has 0", "20"}); }
  { IntWeight w = fresh(act); w.g_idx.pop_back(); expect_fail(w.validate(), {"g_idx has 127", "128"}); }
  {
    IntWeight w = fresh(sym);
    w.codes[2 * k + 7] = 16;
    expect_fail(w.validate(), {"code at row 2, col 7 is 16", "< 16"});
  }
  {
    IntWeight w = fresh(fzp);
    w.codes[5] = 8;  // 3 bits
    expect_fail(w.validate(), {"code at row 0, col 5 is 8", "< 8", "(w3g32-fzp)"});
  }
  {
    IntWeight w = fresh(sym);
    w.scales[3] = std::numeric_limits<float>::quiet_NaN();
    expect_fail(w.validate(), {"scale at row 1, group 1", "nan", "finite"});
  }
  {
    IntWeight w = fresh(sym);
    w.scales[0] = -std::numeric_limits<float>::infinity();
    expect_fail(w.validate(), {"scale at row 0, group 0", "inf"});
  }
  {
    IntWeight w = fresh(sym);
    w.scales[9] = 0.1f;  // not an f16 value
    expect_fail(w.validate(), {"scale at row 4, group 1", "not exactly representable", "f16"});
  }
  {
    IntWeight w = fresh(fzp);
    w.scales[1] = round_to(DType::kF16, 0.1f);  // an f16 value, but not a bf16 one
    expect_fail(w.validate(), {"scale at row 0, group 1", "bf16"});
  }
  {
    IntWeight w = fresh(asym);
    w.zeros[4] = 16;
    expect_fail(w.validate(), {"zero point at row 2, group 0 is 16", "< 16"});
  }
  {
    IntWeight w = fresh(fzp);
    w.zeros_f[6] = 0.3f;
    expect_fail(w.validate(), {"float zero point at row 1, group 2", "bf16"});
  }
  {
    IntWeight w = fresh(fzp);
    w.zeros_f[0] = std::numeric_limits<float>::infinity();
    expect_fail(w.validate(), {"float zero point at row 0, group 0", "finite"});
  }
  { IntWeight w = fresh(act); w.g_idx[9] = 2; expect_fail(w.validate(), {"g_idx[9] is 2", "[0, 2)"}); }
  { IntWeight w = fresh(act); w.g_idx[0] = -1; expect_fail(w.validate(), {"g_idx[0] is -1"}); }
  // f32 scales: any finite value is representable.
  {
    IntWeight w = make_weight(make_format(4, 32, ZeroPoint::kSymmetric, false, DType::kF32), n, k, 5);
    w.scales[0] = 0.1f;
    EXPECT_TRUE(w.validate().ok()) << w.validate().message();
  }
}

// ---------------------------------------------------------------------------------------
Fp8Tensor make_fp8(Fp8Format f, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  Fp8Tensor t;
  t.format = f;
  t.rows = rows;
  t.cols = cols;
  t.codes.resize(static_cast<size_t>(rows * cols));
  for (auto& c : t.codes) {
    do c = static_cast<uint8_t>(rng()); while ((f.dtype == DType::kE4M3 && (c & 0x7F) == 0x7F) ||
                                               (f.dtype == DType::kE5M2 && (c & 0x7F) >= 0x7C));
  }
  t.scales.resize(static_cast<size_t>(t.scale_rows() * t.scale_cols()));
  std::uniform_real_distribution<float> dist(0.001f, 2.0f);
  for (auto& s : t.scales) s = dist(rng);
  return t;
}

TEST(Formats, fp8_tensor_scale_grid_and_dequant) {
  struct Case { Fp8Scaling s; int64_t sr, sc; };
  const int64_t rows = 200, cols = 300;
  const Case cases[] = {{Fp8Scaling::kPerTensor, 1, 1},
                        {Fp8Scaling::kPerRow, 200, 1},
                        {Fp8Scaling::kBlock1x128, 200, 3},
                        {Fp8Scaling::kBlock128x128, 2, 3}};
  uint32_t seed = 300;
  for (const Case& cs : cases)
    for (DType t : {DType::kE4M3, DType::kE5M2}) {
      Fp8Format f;
      f.dtype = t;
      f.scaling = cs.s;
      const Fp8Tensor x = make_fp8(f, rows, cols, ++seed);
      SCOPED_TRACE(f.name());
      EXPECT_EQ(x.scale_rows(), cs.sr);
      EXPECT_EQ(x.scale_cols(), cs.sc);
      ASSERT_TRUE(x.validate().ok()) << x.validate().message();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t br = cs.s == Fp8Scaling::kPerTensor ? 0 : cs.s == Fp8Scaling::kBlock128x128 ? r / 128 : r;
          const int64_t bc = cs.sc == 1 ? 0 : c / 128;
          const float s = x.scales[br * cs.sc + bc];
          ASSERT_EQ(x.scale_of(r, c), s) << r << "," << c;
          const uint8_t code = x.codes[r * cols + c];
          const float v = t == DType::kE4M3 ? e4m3_to_f32(code) : e5m2_to_f32(code);
          ASSERT_EQ(x.dequant(r, c), v * s);
        }
    }
  // Edge shapes of the 128 grid.
  Fp8Tensor x;
  x.format.scaling = Fp8Scaling::kBlock128x128;
  for (int64_t e : {1, 127, 128, 129, 256, 257}) {
    x.rows = e;
    x.cols = e;
    EXPECT_EQ(x.scale_rows(), (e + 127) / 128);
    EXPECT_EQ(x.scale_cols(), (e + 127) / 128);
  }
}

TEST(Formats, fp8_tensor_validate_catches_each_corruption) {
  Fp8Format e4, e5, blk;
  e5.dtype = DType::kE5M2;
  blk.scaling = Fp8Scaling::kBlock128x128;
  const int64_t rows = 130, cols = 140;
  { Fp8Tensor t = make_fp8(e4, rows, cols, 1); t.codes[cols + 3] = 0x7F;
    expect_fail(t.validate(), {"code at row 1, col 3 is 0x7f", "NaN", "(fp8-tensor)"}); }
  { Fp8Tensor t = make_fp8(e4, rows, cols, 1); t.codes[0] = 0xFF; expect_fail(t.validate(), {"0xff", "NaN"}); }
  { Fp8Tensor t = make_fp8(e4, rows, cols, 1); t.codes[0] = 0x7E; EXPECT_TRUE(t.validate().ok()); }
  for (uint8_t bad : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) {
    Fp8Tensor t = make_fp8(e5, rows, cols, 2);
    t.codes[5] = bad;
    expect_fail(t.validate(), {"NaN", "e5m2", "(fp8-tensor-e5m2)"});
  }
  { Fp8Tensor t = make_fp8(e5, rows, cols, 2); t.codes[5] = 0x7C; expect_fail(t.validate(), {"inf"}); }
  { Fp8Tensor t = make_fp8(e4, rows, cols, 3); t.codes.pop_back(); expect_fail(t.validate(), {"codes has 18199", "18200"}); }
  { Fp8Tensor t = make_fp8(blk, rows, cols, 4); t.scales.pop_back();
    expect_fail(t.validate(), {"scales has 3", "scale_rows*scale_cols", "4", "(fp8-128x128)"}); }
  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    Fp8Tensor t = make_fp8(blk, rows, cols, 5);
    t.scales[3] = bad;
    expect_fail(t.validate(), {"scale at (1, 1)", "finite and > 0"});
  }
  { Fp8Tensor t = make_fp8(e4, rows, cols, 6); t.rows = 0; expect_fail(t.validate(), {"rows=0"}); }
  { Fp8Tensor t = make_fp8(e4, rows, cols, 6); t.format.dtype = DType::kBF16; expect_fail(t.validate(), {"dtype=bf16"}); }
}

// ---------------------------------------------------------------------------------------
TEST(Formats, int8_tensor_dequant_and_validate) {
  Int8Tensor t;
  t.rows = 3;
  t.cols = 17;
  std::mt19937 rng(42);
  for (int i = 0; i < 3 * 17; ++i) t.codes.push_back(static_cast<int8_t>(rng()));
  t.scales = {0.5f, 0.25f, 3.0f};
  ASSERT_TRUE(t.validate().ok()) << t.validate().message();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 17; ++c) EXPECT_EQ(t.dequant(r, c), t.codes[r * 17 + c] * t.scales[r]);
  t.zeros = {-128, 0, 127};
  ASSERT_TRUE(t.has_zero_point());
  ASSERT_TRUE(t.validate().ok()) << t.validate().message();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 17; ++c)
      EXPECT_EQ(t.dequant(r, c), static_cast<float>(t.codes[r * 17 + c] - t.zeros[r]) * t.scales[r]);

  { Int8Tensor u = t; u.zeros[1] = 128; expect_fail(u.validate(), {"zero point at row 1 is 128", "[-128, 127]"}); }
  { Int8Tensor u = t; u.zeros[2] = -129; expect_fail(u.validate(), {"zero point at row 2 is -129"}); }
  { Int8Tensor u = t; u.zeros.pop_back(); expect_fail(u.validate(), {"zeros has 2", "rows = 3"}); }
  { Int8Tensor u = t; u.scales.pop_back(); expect_fail(u.validate(), {"scales has 2", "3"}); }
  { Int8Tensor u = t; u.codes.push_back(0); expect_fail(u.validate(), {"codes has 52", "51"}); }
  { Int8Tensor u = t; u.scales[0] = 0.0f; expect_fail(u.validate(), {"scale at row 0", "finite and > 0"}); }
  { Int8Tensor u = t; u.scales[2] = std::numeric_limits<float>::infinity(); expect_fail(u.validate(), {"scale at row 2"}); }
  { Int8Tensor u = t; u.cols = 0; expect_fail(u.validate(), {"cols=0"}); }
}

}  // namespace
