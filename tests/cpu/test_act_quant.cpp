// Tests of lowbit::ActQuant on Device::cpu() (include/lowbit/act_quant.hpp), the reference
// of the activation quantizer kernels. fp8 modes:
//  * bit for bit against an independent recomputation of the documented rules (fp32
//    operations emulated in double, then rounded once: exact for + - * / on these operands;
//    e4m3 rounding by a search of the 127 positive e4m3 values with ties to the even code),
//    in every mode, for f16 and bf16, on shapes with partial 1x128 groups and padding rows;
//  * bit for bit against the host quantizers quantize_fp8() / quantize_fp8_static() with
//    gemm_a_scales() on finite input;
//  * row strides, non-finite input, the static scale aliasing the output, the GEMM fed with
//    the outputs, every validation error, and the CUDA kernel's launch geometry.
// int8 modes (int8-per-token, int8-per-token-zp):
//  * codes, scales and zero points bit for bit against quantize_int8() on finite input
//    (f16 / bf16 converted exactly to fp32 first), rows of every kind of make_int8_values()
//    (constant, all-zero, positive- or negative-only, below the 1e-8 floor, subnormal, rne
//    ties, hi - lo overflowing), k from 16, every output written (two poisons);
//  * hand-computed codes at ties, row strides, the documented non-finite rules, the CPU int8
//    GEMM fed with the outputs, and the argument errors.
// int8 static per tensor (int8-static, with and without the zero point):
//  * codes, scales and zero points bit for bit against an independent recomputation (x / s in
//    double rounded once, half to even by hand, + z exactly, clamp) for several s (tiny and
//    huge included) and z in {-128, -3, 0, 127}, row strides, two poisons; hand-computed
//    codes; NaN / inf input and degenerate s and z (not validated: the formulas' results);
//    the CPU int8 GEMM fed with the outputs against the GEMM on the dequantized activations;
//    names, layout and the argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "act_quant_cases.hpp"
#include "cuda/quant/smxx_fp8_act_quant.hpp"
#include "lowbit/act_quant.hpp"
#include "lowbit/device.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"

namespace {

using namespace lowbit;
using namespace lowbit::test;

uint32_t g_seed = 7100;  // each case draws the next seed; printed in the trace

// ---------------------------------------------------------------------------------------
// The independent recomputation
// ---------------------------------------------------------------------------------------
uint8_t naive_e4m3(float v) {
  if (std::isnan(v)) return 0x7F;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const double a = std::fabs(static_cast<double>(v));
  if (a >= 448.0) return sign | 0x7E;  // saturates (never NaN)
  const auto& vals = e4m3_values();
  // Largest code with value <= a.
  const int lo = static_cast<int>(std::upper_bound(vals.begin(), vals.end(), a) - vals.begin()) - 1;
  const double dlo = a - vals[static_cast<size_t>(lo)], dhi = vals[static_cast<size_t>(lo) + 1] - a;
  int code = lo;
  if (dhi < dlo || (dhi == dlo && (lo & 1))) code = lo + 1;  // ties to the even code
  return static_cast<uint8_t>(sign | code);
}

// fp32 a op b, computed in double and rounded once (exact rounding for these operations).
float div32(float a, float b) { return static_cast<float>(static_cast<double>(a) / b); }
float mul32(float a, float b) { return static_cast<float>(static_cast<double>(a) * b); }

Quantized naive_quantize(ActQuantMode mode, const std::vector<float>& x, int64_t m, int64_t k,
                         float static_s) {
  Quantized out;
  out.q.resize(static_cast<size_t>(m * k));
  const int64_t kb = (k + 127) / 128, m4 = (m + 3) / 4 * 4;
  // Quantize the block rows [r0, r1) x cols [c0, c1) with its own dynamic scale; returns s.
  auto dynamic_block = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    double amax = 0.0;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) {
        const double a = std::fabs(static_cast<double>(x[static_cast<size_t>(r * k + c)]));
        if (!std::isnan(a) && a > amax) amax = a;
      }
    const float a = std::max(static_cast<float>(amax), 1e-4f);
    const float s = div32(a, 448.0f), inv = div32(448.0f, a);
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c)
        out.q[static_cast<size_t>(r * k + c)] = naive_e4m3(mul32(x[static_cast<size_t>(r * k + c)], inv));
    return s;
  };
  switch (mode) {
    case ActQuantMode::kDynamicPerToken:
      for (int64_t r = 0; r < m; ++r) out.scales.push_back(dynamic_block(r, r + 1, 0, k));
      break;
    case ActQuantMode::kDynamicPerTensor:
      out.scales.push_back(dynamic_block(0, m, 0, k));
      break;
    case ActQuantMode::kStaticPerTensor: {
      const float inv = div32(1.0f, static_s);
      for (size_t i = 0; i < out.q.size(); ++i) out.q[i] = naive_e4m3(mul32(x[i], inv));
      out.scales.push_back(static_s);
      break;
    }
    case ActQuantMode::kDynamicBlock1x128:
      out.scales.assign(static_cast<size_t>(kb * m4), 0.0f);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t b = 0; b < kb; ++b)
          out.scales[static_cast<size_t>(b * m4 + r)] =
              dynamic_block(r, r + 1, b * 128, std::min(k, b * 128 + 128));
      break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Running the CPU path
// ---------------------------------------------------------------------------------------
// run_cpu() (act_quant_cases.hpp), also checking what the CPU path reports about itself.
Quantized run_cpu_checked(const ActQuantDesc& d, const std::vector<uint8_t>& x, float static_s) {
  const ActQuant op(d, Device::cpu());
  EXPECT_EQ(op.workspace_size(), 0u);
  EXPECT_EQ(op.kernel_name(), "cpu_reference");
  return run_cpu(d, x, static_s);
}

// Codes, scales and zero points equal bit for bit; the first differences described.
void expect_same(const Quantized& got, const Quantized& want, const std::string& what) {
  ASSERT_EQ(got.q.size(), want.q.size()) << what;
  ASSERT_EQ(got.scales.size(), want.scales.size()) << what;
  ASSERT_EQ(got.zeros.size(), want.zeros.size()) << what;
  int bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.q.size(); ++i)
    if (got.q[i] != want.q[i] && bad++ < 5)
      first << "\n  code " << i << ": got 0x" << std::hex << int{got.q[i]} << ", want 0x"
            << int{want.q[i]} << std::dec;
  for (size_t i = 0; i < got.scales.size(); ++i)
    if (bits_of(got.scales[i]) != bits_of(want.scales[i]) && bad++ < 10)
      first << "\n  scale " << i << ": got " << got.scales[i] << ", want " << want.scales[i];
  for (size_t i = 0; i < got.zeros.size(); ++i)
    if (got.zeros[i] != want.zeros[i] && bad++ < 15)
      first << "\n  zero " << i << ": got " << got.zeros[i] << ", want " << want.zeros[i];
  EXPECT_EQ(bad, 0) << what << first.str();
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------
TEST(act_quant, cpu_matches_independent_recomputation) {
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (Flavor f : {Flavor::kMixed, Flavor::kTies, Flavor::kTiny})
        for (int64_t m : kMs)
          for (int64_t k : kKs) {
            const uint32_t seed = g_seed++;
            std::mt19937 rng(seed);
            const ActQuantDesc d = make_desc(mode, t, m, k);
            const std::string what = case_name(d, f, seed);
            const std::vector<float> x = make_values(mode, t, m, k, f, rng);
            const float s = static_scale_of(f);
            const Quantized got = run_cpu_checked(d, encode_rows(x, t, m, k, k, 0.0f), s);
            expect_same(got, naive_quantize(mode, x, m, k, s), what);
          }
}

TEST(act_quant, cpu_matches_host_quantizers) {
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (Flavor f : {Flavor::kMixed, Flavor::kTies, Flavor::kTiny})
        for (int64_t m : {1, 5, 129})
          for (int64_t k : {16, 144, 1040}) {
            const uint32_t seed = g_seed++;
            std::mt19937 rng(seed);
            const ActQuantDesc d = make_desc(mode, t, m, k);
            const std::vector<float> x = make_values(mode, t, m, k, f, rng);
            const float s = static_scale_of(f);
            Fp8Tensor ref;
            if (mode == ActQuantMode::kStaticPerTensor) {
              ref = quantize_fp8_static(x.data(), m, k, s);
            } else {
              Fp8Format fmt;
              fmt.dtype = DType::kE4M3;
              fmt.scaling = act_quant_scaling(mode);
              ref = quantize_fp8(x.data(), m, k, fmt);
            }
            const Quantized got = run_cpu_checked(d, encode_rows(x, t, m, k, k, 0.0f), s);
            expect_same(got, Quantized{ref.codes, gemm_a_scales(ref), {}}, case_name(d, f, seed));
            EXPECT_TRUE(ref.validate().ok());
          }
}

TEST(act_quant, row_stride_reads_only_k_columns) {
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (int64_t k : {16, 144, 4096}) {
        const int64_t m = 5, ld = k + 24;
        const uint32_t seed = g_seed++;
        std::mt19937 rng(seed);
        const std::vector<float> x = make_values(mode, t, m, k, Flavor::kMixed, rng);
        const Quantized dense = run_cpu_checked(make_desc(mode, t, m, k), encode_rows(x, t, m, k, k, 0.0f), 0.02f);
        // Huge garbage between the rows: any read of it would change amax or codes.
        const Quantized strided =
            run_cpu_checked(make_desc(mode, t, m, k, ld), encode_rows(x, t, m, k, ld, 30000.0f), 0.02f);
        expect_same(strided, dense, make_desc(mode, t, m, k, ld).describe());
      }
}

// The documented non-finite semantics (act_quant.hpp), which the GPU test holds the kernels to.
TEST(act_quant, non_finite_inputs) {
  for (DType t : kDTypes) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
    // Row 0: NaN among finite values; row 1: +inf among finite values.
    const int64_t m = 2, k = 16;
    std::vector<float> x(static_cast<size_t>(m * k), 1.0f);
    x[3] = nan;
    x[5] = -nan;
    x[7] = 224.0f;  // the row's amax: inv = 2
    x[k + 2] = inf;
    x[k + 4] = -2.0f;
    x[k + 6] = -inf;
    const std::vector<uint8_t> bytes = encode_rows(x, t, m, k, k, 0.0f);

    const Quantized row = run_cpu_checked(make_desc(ActQuantMode::kDynamicPerToken, t, m, k), bytes, 1.0f);
    EXPECT_EQ(row.scales[0], 0.5f);                  // 224 / 448: NaN ignored by amax
    EXPECT_EQ(row.q[3], 0x7F);                       // NaN -> 0x7F
    EXPECT_EQ(row.q[5], 0x7F);                       // -NaN -> 0x7F too (no sign promised)
    EXPECT_EQ(row.q[7], 0x7E);                       // 448
    EXPECT_EQ(row.q[0], naive_e4m3(2.0f));           // 1 * 2
    EXPECT_TRUE(std::isinf(row.scales[1]));          // inf amax: scale inf, multiplier 0
    EXPECT_EQ(row.q[k + 2], 0x7F);                   // inf * 0 = NaN
    EXPECT_EQ(row.q[k + 4], 0x80);                   // -2 * 0 = -0
    EXPECT_EQ(row.q[k + 0], 0x00);

    const Quantized st = run_cpu_checked(make_desc(ActQuantMode::kStaticPerTensor, t, m, k), bytes, 1.0f);
    EXPECT_EQ(st.q[3], 0x7F);
    EXPECT_EQ(st.q[k + 2], 0x7E);  // static: +inf saturates to +448
    EXPECT_EQ(st.q[k + 6], 0xFE);  // -inf to -448
    EXPECT_EQ(st.scales[0], 1.0f);

    const Quantized blk = run_cpu_checked(make_desc(ActQuantMode::kDynamicBlock1x128, t, m, k), bytes, 1.0f);
    EXPECT_EQ(blk.scales[0], 0.5f);
    EXPECT_TRUE(std::isinf(blk.scales[1]));
    EXPECT_EQ(blk.scales[2], 0.0f);  // padding rows
    EXPECT_EQ(blk.scales[3], 0.0f);

    // The independent recomputation agrees on all of it (it models the same rules).
    for (ActQuantMode mode : kModes)
      expect_same(run_cpu_checked(make_desc(mode, t, m, k), bytes, 1.0f),
                  naive_quantize(mode, x, m, k, 1.0f), make_desc(mode, t, m, k).describe());
  }
}

TEST(act_quant, static_scale_may_alias_scales) {
  const int64_t m = 3, k = 32;
  std::mt19937 rng(g_seed++);
  const std::vector<float> x = make_values(ActQuantMode::kStaticPerTensor, DType::kBF16, m, k,
                                           Flavor::kMixed, rng);
  const std::vector<uint8_t> bytes = encode_rows(x, DType::kBF16, m, k, k, 0.0f);
  ActQuant op(make_desc(ActQuantMode::kStaticPerTensor, DType::kBF16, m, k), Device::cpu());
  float scale = 0.02f;
  std::vector<uint8_t> q(static_cast<size_t>(m * k));
  ActQuantArgs a;
  a.x = bytes.data();
  a.static_scale = &scale;
  a.scales = &scale;
  a.q = q.data();
  ASSERT_TRUE(op.run(a, nullptr).ok());
  EXPECT_EQ(scale, 0.02f);
  EXPECT_EQ(q, naive_quantize(ActQuantMode::kStaticPerTensor, x, m, k, 0.02f).q);
}

// The outputs are GemmArgs::a / a_scales as they are: the CPU GEMM gives the same result as
// with the host quantizer's operands, and a small error against the unquantized product.
TEST(act_quant, outputs_drive_cpu_gemm) {
  const int64_t n = 48;
  for (ActQuantMode mode : kModes)
    for (DType t : kDTypes)
      for (int64_t m : {1, 5, 64})
        for (int64_t k : {144, 512}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const ActQuantDesc ad = make_desc(mode, t, m, k);
          SCOPED_TRACE(ad.describe() + " seed=" + std::to_string(seed));
          std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k));
          std::normal_distribution<float> normal(0.0f, 1.0f);
          for (float& v : x) v = normal(rng);
          for (float& v : w) v = normal(rng);
          const std::vector<uint8_t> xb = encode_rows(x, t, m, k, k, 0.0f);
          for (int64_t i = 0; i < m * k; ++i) x[static_cast<size_t>(i)] = load_as_f32(xb.data(), t, i);
          const float s = 0.02f;
          const Quantized got = run_cpu_checked(ad, xb, s);

          GemmDesc gd;
          gd.m = m;
          gd.n = n;
          gd.k = k;
          gd.a = ad.act_format();
          Fp8Format wf;
          wf.scaling = mode == ActQuantMode::kDynamicBlock1x128 ? Fp8Scaling::kBlock128x128
                                                                : Fp8Scaling::kPerRow;
          gd.w = WeightFormat::fp8_format(wf);
          gd.out_dtype = DType::kF32;
          Gemm g(gd, Device::cpu());
          ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
          ASSERT_EQ(gemm_a_scales_count(gd), static_cast<int64_t>(got.scales.size()));
          const PackedWeight pw = g.pack(quantize_fp8(w.data(), n, k, wf));
          std::vector<uint8_t> ws(g.workspace_size());
          auto run = [&](const std::vector<uint8_t>& a, const std::vector<float>& as) {
            std::vector<float> out(static_cast<size_t>(m * n));
            GemmArgs args;
            args.a = a.data();
            args.a_scales = as.data();
            args.w = pw.host_view();
            args.out = out.data();
            const Status st = g.run(args, ws.data());
            EXPECT_TRUE(st.ok()) << st.message();
            return out;
          };
          const std::vector<float> out = run(got.q, got.scales);
          Fp8Tensor ref = mode == ActQuantMode::kStaticPerTensor
                              ? quantize_fp8_static(x.data(), m, k, s)
                              : quantize_fp8(x.data(), m, k, Fp8Format{DType::kE4M3, act_quant_scaling(mode)});
          const std::vector<float> want = run(ref.codes, gemm_a_scales(ref));
          ASSERT_EQ(out.size(), want.size());
          for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(bits_of(out[i]), bits_of(want[i])) << i;
          // Against the unquantized product (weights quantized the same way): e4m3 keeps 3
          // mantissa bits, so a few percent; a misplaced scale would be off by far more.
          std::vector<float> wq(static_cast<size_t>(n * k)), exact(static_cast<size_t>(m * n));
          const Fp8Tensor wt = quantize_fp8(w.data(), n, k, wf);
          for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < k; ++c) wq[static_cast<size_t>(r * k + c)] = wt.dequant(r, c);
          gemm_nt_reference(x.data(), wq.data(), nullptr, m, n, k, exact.data());
          EXPECT_LE(relative_error(out.data(), exact.data(), m * n), 0.08);
        }
}

TEST(act_quant, validation_errors) {
  auto message_of = [](const ActQuantDesc& d, Device dev = Device::cpu()) {
    return ActQuant(d, dev).can_implement().message();
  };
  const ActQuantDesc ok = make_desc(ActQuantMode::kDynamicPerToken, DType::kF16, 4, 64);
  EXPECT_TRUE(ActQuant(ok, Device::cpu()).can_implement().ok());

  ActQuantDesc d = ok;
  d.m = 0;
  EXPECT_NE(message_of(d).find("m=0 must be >= 1"), std::string::npos) << message_of(d);
  d = ok;
  d.k = 0;
  EXPECT_NE(message_of(d).find("k=0 must be a positive multiple of 16"), std::string::npos);
  d.k = 40;
  EXPECT_NE(message_of(d).find("k=40 must be a positive multiple of 16"), std::string::npos);
  d.k = -16;
  EXPECT_FALSE(ActQuant(d, Device::cpu()).can_implement().ok());
  d = ok;
  for (DType bad : {DType::kF32, DType::kE4M3, DType::kI8}) {
    d.dtype = bad;
    EXPECT_NE(message_of(d).find("must be f16 or bf16"), std::string::npos) << message_of(d);
  }
  d = ok;
  d.mode = static_cast<ActQuantMode>(9);
  EXPECT_NE(message_of(d).find("is not an ActQuantMode"), std::string::npos) << message_of(d);
  d = ok;
  d.x_row_stride = 32;
  EXPECT_NE(message_of(d).find("x_row_stride=32 must be 0 (dense) or >= k=64"), std::string::npos);
  d.x_row_stride = -8;
  EXPECT_FALSE(ActQuant(d, Device::cpu()).can_implement().ok());
  d.x_row_stride = 66;  // fine on the CPU, not on CUDA (16-byte rows)
  EXPECT_TRUE(ActQuant(d, Device::cpu()).can_implement().ok());
  d = ok;
  d.m = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_NE(message_of(d).find("overflows"), std::string::npos) << message_of(d);
  EXPECT_TRUE(message_of(ok).empty());

  // A failed ActQuant reports itself everywhere and never runs.
  d = ok;
  d.k = 40;
  ActQuant bad(d, Device::cpu());
  EXPECT_EQ(bad.workspace_size(), 0u);
  EXPECT_EQ(bad.scales_count(), 0);
  EXPECT_EQ(bad.kernel_name(), "");
  EXPECT_FALSE(bad.run(ActQuantArgs{}, nullptr).ok());

  // Null pointers.
  ActQuant op(ok, Device::cpu());
  std::vector<uint8_t> x(4 * 64 * 2), q(4 * 64);
  std::vector<float> scales(4);
  ActQuantArgs a;
  a.x = x.data();
  a.q = q.data();
  a.scales = scales.data();
  EXPECT_TRUE(op.run(a, nullptr).ok());
  ActQuantArgs b = a;
  b.x = nullptr;
  EXPECT_NE(op.run(b, nullptr).message().find("x is null"), std::string::npos);
  b = a;
  b.q = nullptr;
  EXPECT_NE(op.run(b, nullptr).message().find("q (the e4m3 codes) is null"), std::string::npos);
  b = a;
  b.scales = nullptr;
  EXPECT_NE(op.run(b, nullptr).message().find("scales is null"), std::string::npos);
  ActQuant st(make_desc(ActQuantMode::kStaticPerTensor, DType::kF16, 4, 64), Device::cpu());
  EXPECT_NE(st.run(a, nullptr).message().find("static_scale is null"), std::string::npos);

  // The CUDA device: a clear reason when this build or machine has none.
  const Status cuda = ActQuant(ok, Device::cuda(0)).can_implement();
  if (!built_with_cuda()) {
    EXPECT_NE(cuda.message().find("built without CUDA"), std::string::npos) << cuda.message();
  } else if (list_gpus().empty()) {
    EXPECT_FALSE(cuda.ok());
    EXPECT_EQ(cuda.message().rfind("lowbit: ", 0), 0u) << cuda.message();
  }
  if (!cuda.ok()) {
    ActQuant c(ok, Device::cuda(0));
    EXPECT_EQ(c.run(a, nullptr).message(), cuda.message());
    EXPECT_EQ(c.workspace_size(), 0u);
  }
  ActQuantDesc strided = ok;
  strided.x_row_stride = 66;
  const Status cs = ActQuant(strided, Device::cuda(0)).can_implement();
  EXPECT_FALSE(cs.ok());
  if (built_with_cuda())
    EXPECT_NE(cs.message().find("must be a multiple of 8 on CUDA"), std::string::npos) << cs.message();
}

TEST(act_quant, quantize_fp8_static_rules_and_errors) {
  std::mt19937 rng(g_seed++);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(7 * 48);
  for (float& v : x) v = normal(rng);
  x[5] = 1e6f;  // saturates
  for (float s : {0.02f, 1.0f, 3.3e-3f}) {
    const Fp8Tensor t = quantize_fp8_static(x.data(), 7, 48, s);
    EXPECT_TRUE(t.validate().ok());
    ASSERT_EQ(t.scales.size(), 1u);
    EXPECT_EQ(t.scales[0], s);
    EXPECT_EQ(t.codes, naive_quantize(ActQuantMode::kStaticPerTensor, x, 7, 48, s).q);
    EXPECT_EQ(t.codes[5], 0x7E);
  }
  for (float s : {0.0f, -1.0f, INFINITY, std::numeric_limits<float>::quiet_NaN()})
    EXPECT_THROW(quantize_fp8_static(x.data(), 7, 48, s), Error) << s;
  x[9] = INFINITY;
  EXPECT_THROW(quantize_fp8_static(x.data(), 7, 48, 1.0f), Error);
  EXPECT_THROW(quantize_fp8_static(x.data(), 0, 48, 1.0f), Error);
}

TEST(act_quant, names_layout_and_counts) {
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kDynamicPerToken), "per-token");
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kDynamicPerTensor), "per-tensor");
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kStaticPerTensor), "static");
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kDynamicBlock1x128), "1x128");
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kInt8PerToken), "int8-per-token");
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kInt8PerTokenZeroPoint), "int8-per-token-zp");
  for (ActQuantMode mode : kModes) EXPECT_FALSE(act_quant_is_int8(mode));
  for (ActQuantMode mode : kInt8Modes) {
    EXPECT_TRUE(act_quant_is_int8(mode));
    EXPECT_EQ(act_quant_scaling(mode), Fp8Scaling::kPerRow);  // documented: per token
    const ActFormat f = make_desc(mode, DType::kF16, 3, 64).act_format();
    EXPECT_EQ(f.dtype, DType::kI8);
    EXPECT_EQ(f.int8_zero_point, mode == ActQuantMode::kInt8PerTokenZeroPoint);
    EXPECT_EQ(f.fp8_scaling, ActFormat{}.fp8_scaling);  // not used by int8: left at the default
    for (int64_t m : kMs)
      for (int64_t k : kKs) {
        const ActQuantDesc d = make_desc(mode, DType::kBF16, m, k);
        GemmDesc g;
        g.m = m;
        g.k = k;
        g.n = 16;
        g.a = d.act_format();
        const ActQuant op(d, Device::cpu());
        EXPECT_EQ(op.scales_count(), m) << d.describe();
        EXPECT_EQ(op.scales_count(), gemm_a_scales_count(g)) << d.describe();
        EXPECT_EQ(op.workspace_size(), 0u);
        EXPECT_EQ(op.kernel_name(), "cpu_reference");
      }
  }
  EXPECT_EQ(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, DType::kF16, 2, 32, 48).describe(),
            "m=2 k=32 x=f16 mode=int8-per-token-zp x_row_stride=48");
  EXPECT_EQ(make_desc(ActQuantMode::kDynamicBlock1x128, DType::kBF16, 4, 4096).describe(),
            "m=4 k=4096 x=bf16 mode=1x128");
  for (ActQuantMode mode : kModes)
    for (int64_t m : kMs)
      for (int64_t k : kKs) {
        const ActQuantDesc d = make_desc(mode, DType::kF16, m, k);
        GemmDesc g;
        g.m = m;
        g.k = k;
        g.n = 16;
        g.a = d.act_format();
        EXPECT_EQ(g.a.dtype, DType::kE4M3);
        EXPECT_EQ(ActQuant(d, Device::cpu()).scales_count(), gemm_a_scales_count(g)) << d.describe();
      }
  EXPECT_EQ(ActQuant(make_desc(ActQuantMode::kDynamicBlock1x128, DType::kF16, 5, 144), Device::cpu())
                .scales_count(),
            2 * 8);
}

// The CUDA kernel's launch geometry (smxx_fp8_act_quant.hpp), checked on the host for every
// k the kernel takes up to past two chunks: full warps, rows in aligned lane groups, 1x128
// groups inside one row's aligned 8 lanes, every item covered, one chunk up to k = 32768.
TEST(act_quant, cuda_launch_geometry) {
  using namespace lowbit::cuda;
  for (Fp8ActQuantOp op : {Fp8ActQuantOp::kPerRow, Fp8ActQuantOp::kGroup128, Fp8ActQuantOp::kTensorAmax,
                           Fp8ActQuantOp::kTensorDynamic, Fp8ActQuantOp::kTensorStatic})
    for (int64_t k = 16; k <= 70000; k += 16)
      for (int64_t rows : {int64_t{1}, int64_t{4}, int64_t{129}, int64_t{100000}}) {
        const Fp8ActQuantShape s = fp8_act_quant_shape(k, rows, op);
        const int tpr = s.threads_per_row, rpb = s.rows_per_block;
        const std::string what = "k=" + std::to_string(k) + " rows=" + std::to_string(rows);
        ASSERT_GE(tpr, 8) << what;
        ASSERT_LE(tpr * rpb, 1024) << what;
        ASSERT_EQ(tpr * rpb % 32, 0) << what;             // full warps
        if (tpr < 32) ASSERT_EQ(32 % tpr, 0) << what;       // rows are aligned lane groups
        else ASSERT_EQ(tpr % 32, 0) << what;
        if (tpr > 32) ASSERT_EQ(rpb, 1) << what;            // row_max's shared-memory path
        ASSERT_EQ(tpr % kActQuantGroupItems, 0) << what;   // groups inside aligned 8 lanes
        const int64_t items = k / 16;
        ASSERT_GE(s.chunks * tpr * kActQuantItemsPerThread, items) << what;
        ASSERT_LT((s.chunks - 1) * tpr * kActQuantItemsPerThread, items) << what;
        if (k <= 32768) ASSERT_EQ(s.chunks, 1) << what;    // per-token reads X once
        if (op == Fp8ActQuantOp::kTensorAmax)
          ASSERT_EQ(s.blocks, std::min<int64_t>((rows + rpb - 1) / rpb, kActQuantMaxAmaxBlocks)) << what;
        else
          ASSERT_GE(s.blocks * rpb, rows) << what;
        ASSERT_LE(s.blocks, std::numeric_limits<int32_t>::max()) << what;
      }
}

// The one-launch dynamic per-tensor path (fp8_act_quant_fused_ctas): the fewest CTAs that give
// each of their 512 threads one item, else 8 CTAs with up to 4 items per thread; 0 (the general
// path) past that; without clusters (sm_80 / sm_89) one CTA or none. Every X it takes fits the
// threads' registers.
TEST(act_quant, cuda_one_launch_per_tensor_rule) {
  using namespace lowbit::cuda;
  EXPECT_EQ(fp8_act_quant_fused_ctas(1, 4096, true), 1);
  EXPECT_EQ(fp8_act_quant_fused_ctas(1, 14336, true), 2);
  EXPECT_EQ(fp8_act_quant_fused_ctas(16, 4096, true), 8);
  EXPECT_EQ(fp8_act_quant_fused_ctas(64, 4096, true), 8);
  EXPECT_EQ(fp8_act_quant_fused_ctas(65, 4096, true), 0);
  EXPECT_EQ(fp8_act_quant_fused_ctas(18, 14336, true), 8);
  EXPECT_EQ(fp8_act_quant_fused_ctas(19, 14336, true), 0);
  EXPECT_EQ(fp8_act_quant_fused_ctas(8, 4096, false), 1);
  EXPECT_EQ(fp8_act_quant_fused_ctas(9, 4096, false), 0);
  for (bool clusters : {false, true})
    for (int64_t k = 16; k <= 40000; k += 16)
      for (int64_t m : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{16}, int64_t{64}, int64_t{300}}) {
        const int c = fp8_act_quant_fused_ctas(m, k, clusters);
        const int64_t items = m * (k / kActQuantItemElems);
        const std::string what = "m=" + std::to_string(m) + " k=" + std::to_string(k);
        ASSERT_TRUE(c == 0 || c == 1 || c == 2 || c == 4 || c == 8) << what;
        if (!clusters) ASSERT_LE(c, 1) << what;
        if (c > 0) ASSERT_LE(items, int64_t{c} * kActQuantFusedCtaItems) << what;   // X fits
        if (c == 0) ASSERT_GT(items, int64_t{clusters ? 8 : 1} * kActQuantFusedCtaItems) << what;
        if (c > 1 && items <= int64_t{c} * kActQuantFusedThreads)
          ASSERT_GT(items, int64_t{c / 2} * kActQuantFusedThreads) << what;  // the fewest CTAs
      }
}

// ---------------------------------------------------------------------------------------
// int8 per token
// ---------------------------------------------------------------------------------------
// The CPU path for an int8 mode, run twice with code poisons 0xFF and 0x00 (every byte is a
// valid int8 code, so one poison cannot show an unwritten code; two can): both runs agree,
// no scale is NaN and every zero point is in [-128, 127].
Quantized run_cpu_int8(const ActQuantDesc& d, const std::vector<uint8_t>& x) {
  const Quantized a = run_cpu_checked(d, x, 1.0f);
  const Quantized b = run_cpu(d, x, 1.0f, 0x00);
  expect_same(b, a, d.describe() + " (code poison 0x00 vs 0xFF)");
  for (float s : a.scales) EXPECT_FALSE(std::isnan(s)) << d.describe();
  EXPECT_EQ(a.zeros.size(), d.mode == ActQuantMode::kInt8PerTokenZeroPoint ? static_cast<size_t>(d.m) : 0u);
  for (int32_t z : a.zeros) EXPECT_TRUE(z >= -128 && z <= 127) << d.describe() << ": zero point " << z;
  return a;
}

// Bit for bit against quantize_int8() on the exact fp32 values of the f16 / bf16 input.
TEST(act_quant, int8_matches_quantize_int8) {
  for (ActQuantMode mode : kInt8Modes)
    for (DType t : kDTypes)
      for (int64_t m : {1, 3, 12, 13, 64, 129})
        for (int64_t k : {16, 32, 112, 144, 4096}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const ActQuantDesc d = make_desc(mode, t, m, k);
          const std::vector<float> x = make_int8_values(mode, t, m, k, rng);
          const Quantized got = run_cpu_int8(d, encode_rows(x, t, m, k, k, 0.0f));
          expect_same(got, int8_host_quantizer(mode, x, m, k), case_name(d, "int8 rows", seed));
          if (::testing::Test::HasFatalFailure()) return;
        }
}

// Hand-computed rows: rne ties to even at s = 1, the clamps, constant and one-signed rows.
TEST(act_quant, int8_hand_computed_rows) {
  for (DType t : kDTypes) {
    const int64_t k = 16;
    // Symmetric, s = 1 (amax 127): n + 0.5 rounds to the even neighbour.
    std::vector<float> x = {127.0f, -127.0f, 2.5f, 3.5f, -2.5f, -3.5f, 0.5f, -0.5f,
                            1.5f,   126.5f,  -126.5f, 0.0f, -0.0f, 64.0f, 100.25f, -100.75f};
    Quantized q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerToken, t, 1, k), encode_rows(x, t, 1, k, k, 0.0f));
    const std::vector<int> want_sym = {127, -127, 2, 4, -2, -4, 0, 0, 2, 126, -126, 0, 0, 64, 100, -101};
    ASSERT_EQ(q.scales[0], 1.0f);
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(static_cast<int8_t>(q.q[c]), want_sym[c]) << dtype_name(t) << " c=" << c;
    // Zero point, s = 1 (lo = -128, hi = 127), z = rne(-128 + 128) = 0.
    x[1] = -128.0f;
    q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, t, 1, k), encode_rows(x, t, 1, k, k, 0.0f));
    ASSERT_EQ(q.scales[0], 1.0f);
    ASSERT_EQ(q.zeros[0], 0);
    EXPECT_EQ(static_cast<int8_t>(q.q[1]), -128);
    EXPECT_EQ(static_cast<int8_t>(q.q[2]), 2);
    EXPECT_EQ(static_cast<int8_t>(q.q[3]), 4);
    // Positive-only row: lo = 0, z = -128, the row's max at 127.
    std::vector<float> pos(k, 3.0f);
    pos[4] = 6.0f;
    q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, t, 1, k), encode_rows(pos, t, 1, k, k, 0.0f));
    EXPECT_EQ(q.scales[0], 6.0f / 255.0f);
    EXPECT_EQ(q.zeros[0], -128);
    EXPECT_EQ(static_cast<int8_t>(q.q[4]), 127);
    EXPECT_EQ(static_cast<int8_t>(q.q[0]), static_cast<int>(std::nearbyint(3.0f / (6.0f / 255.0f))) - 128);
    // Negative-only row: hi = 0, z = rne(-128 + 255) = 127, the row's min at -128.
    for (float& v : pos) v = -v;
    q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, t, 1, k), encode_rows(pos, t, 1, k, k, 0.0f));
    EXPECT_EQ(q.zeros[0], 127);
    EXPECT_EQ(static_cast<int8_t>(q.q[4]), -128);
    // Constant row c: symmetric codes all 127 (or -127), s = |c| / 127.
    std::vector<float> cst(k, -0.75f);
    q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerToken, t, 1, k), encode_rows(cst, t, 1, k, k, 0.0f));
    EXPECT_EQ(q.scales[0], 0.75f / 127.0f);
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(static_cast<int8_t>(q.q[c]), -127);
    // All-zero row: the 1e-8 floor, codes 0 (symmetric) or z = -128 (zero point).
    const std::vector<float> zero(k, 0.0f);
    q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerToken, t, 1, k), encode_rows(zero, t, 1, k, k, 0.0f));
    EXPECT_EQ(q.scales[0], 1e-8f / 127.0f);
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(q.q[c], 0);
    q = run_cpu_int8(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, t, 1, k), encode_rows(zero, t, 1, k, k, 0.0f));
    EXPECT_EQ(q.scales[0], 1e-8f / 255.0f);
    EXPECT_EQ(q.zeros[0], -128);
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(static_cast<int8_t>(q.q[c]), -128);
  }
}

TEST(act_quant, int8_row_stride_reads_only_k_columns) {
  for (ActQuantMode mode : kInt8Modes)
    for (DType t : kDTypes)
      for (int64_t k : {16, 144, 4096})
        for (int64_t pad : {3, 8, 24}) {
          const int64_t m = 13, ld = k + pad;
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const std::vector<float> x = make_int8_values(mode, t, m, k, rng);
          const Quantized dense = run_cpu_int8(make_desc(mode, t, m, k), encode_rows(x, t, m, k, k, 0.0f));
          // Huge garbage between the rows: any read of it would change the range or codes.
          const Quantized strided = run_cpu_int8(make_desc(mode, t, m, k, ld), encode_rows(x, t, m, k, ld, 30000.0f));
          expect_same(strided, dense, case_name(make_desc(mode, t, m, k, ld), "int8 rows", seed));
          expect_same(strided, int8_host_quantizer(mode, x, m, k), case_name(make_desc(mode, t, m, k, ld), "int8 rows", seed));
        }
}

// The documented non-finite rules (act_quant.hpp), which the GPU test holds the kernel to.
TEST(act_quant, int8_non_finite_inputs) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  for (DType t : kDTypes) {
    const int64_t m = 6, k = 16;
    std::vector<float> x(static_cast<size_t>(m * k), 1.0f);
    auto at = [&](int64_t r, int64_t c) -> float& { return x[static_cast<size_t>(r * k + c)]; };
    at(0, 3) = nan;  // row 0: NaN among finite values, the row's range 0..127
    at(0, 5) = -nan;
    at(0, 7) = 127.0f;
    at(1, 2) = inf;  // row 1: +inf among finite values
    at(1, 4) = -2.0f;
    at(2, 6) = -inf;  // row 2: -inf among finite values
    at(2, 8) = 5.0f;
    for (int64_t c = 0; c < k; ++c) at(3, c) = c % 2 ? nan : -nan;  // row 3: NaN only
    at(4, 0) = inf;  // row 4: +inf, -inf and NaN
    at(4, 1) = -inf;
    at(4, 2) = nan;
    for (int64_t c = 0; c < k; ++c) at(5, c) = static_cast<float>(c) - 4.5f;  // row 5: finite
    const std::vector<uint8_t> bytes = encode_rows(x, t, m, k, k, 0.0f);
    const std::string what = std::string("int8 non-finite ") + dtype_name(t);
    auto code = [&](const Quantized& q, int64_t r, int64_t c) { return static_cast<int>(static_cast<int8_t>(q.q[static_cast<size_t>(r * k + c)])); };

    const Quantized sym = run_cpu_int8(make_desc(ActQuantMode::kInt8PerToken, t, m, k), bytes);
    EXPECT_EQ(sym.scales[0], 1.0f) << what;  // NaN ignored by amax: 127 / 127
    EXPECT_EQ(code(sym, 0, 3), 0) << what;   // NaN -> 0
    EXPECT_EQ(code(sym, 0, 5), 0) << what;
    EXPECT_EQ(code(sym, 0, 7), 127) << what;
    EXPECT_EQ(code(sym, 0, 0), 1) << what;
    for (int64_t r : {1, 2, 4}) {
      EXPECT_TRUE(std::isinf(sym.scales[static_cast<size_t>(r)]) && sym.scales[static_cast<size_t>(r)] > 0) << what << " row " << r;
      for (int64_t c = 0; c < k; ++c) EXPECT_EQ(code(sym, r, c), 0) << what << " row " << r << " c=" << c;
    }
    EXPECT_EQ(sym.scales[3], 1e-8f / 127.0f) << what;  // NaN only: amax 0, the floor
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(code(sym, 3, c), 0) << what;

    const Quantized zp = run_cpu_int8(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, t, m, k), bytes);
    const float s0 = 127.0f / 255.0f;  // lo = 0, hi = 127
    EXPECT_EQ(zp.scales[0], s0) << what;
    EXPECT_EQ(zp.zeros[0], -128) << what;
    EXPECT_EQ(code(zp, 0, 3), -128) << what;  // NaN -> z
    EXPECT_EQ(code(zp, 0, 5), -128) << what;
    EXPECT_EQ(code(zp, 0, 0), static_cast<int>(std::nearbyint(1.0f / s0)) - 128) << what;
    for (int64_t r : {1, 2, 4}) {
      EXPECT_TRUE(std::isinf(zp.scales[static_cast<size_t>(r)]) && zp.scales[static_cast<size_t>(r)] > 0) << what << " row " << r;
      EXPECT_EQ(zp.zeros[static_cast<size_t>(r)], -128) << what << " row " << r;
      for (int64_t c = 0; c < k; ++c) EXPECT_EQ(code(zp, r, c), -128) << what << " row " << r << " c=" << c;
    }
    EXPECT_EQ(zp.scales[3], 1e-8f / 255.0f) << what;
    EXPECT_EQ(zp.zeros[3], -128) << what;
    for (int64_t c = 0; c < k; ++c) EXPECT_EQ(code(zp, 3, c), -128) << what;

    // The finite row is untouched by its neighbours: quantize_int8() of it alone.
    const std::vector<float> row5(x.begin() + 5 * k, x.end());
    for (ActQuantMode mode : kInt8Modes) {
      const Quantized got = run_cpu_int8(make_desc(mode, t, m, k), bytes);
      const Quantized want = int8_host_quantizer(mode, row5, 1, k);
      EXPECT_EQ(std::vector<uint8_t>(got.q.begin() + 5 * k, got.q.end()), want.q) << what;
      EXPECT_EQ(got.scales[5], want.scales[0]) << what;
      if (!want.zeros.empty()) EXPECT_EQ(got.zeros[5], want.zeros[0]) << what;
    }
  }
}

// The outputs are GemmArgs::a / a_scales / a_zeros as they are: the CPU int8 GEMM gives, bit
// for bit, the result it gives with quantize_int8()'s operands, and a small error against the
// unquantized product.
TEST(act_quant, int8_outputs_drive_cpu_gemm) {
  const int64_t n = 48;
  for (ActQuantMode mode : kInt8Modes)
    for (DType t : kDTypes)
      for (int64_t m : {1, 5, 64})
        for (int64_t k : {144, 512}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const ActQuantDesc ad = make_desc(mode, t, m, k);
          SCOPED_TRACE(ad.describe() + " seed=" + std::to_string(seed));
          std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k));
          std::normal_distribution<float> normal(0.0f, 1.0f);
          for (float& v : x) v = normal(rng) + 0.75f;  // shifted: zero points away from -128 / 0
          for (float& v : w) v = normal(rng);
          const std::vector<uint8_t> xb = encode_rows(x, t, m, k, k, 0.0f);
          for (int64_t i = 0; i < m * k; ++i) x[static_cast<size_t>(i)] = load_as_f32(xb.data(), t, i);
          const Quantized got = run_cpu_int8(ad, xb);

          GemmDesc gd;
          gd.m = m;
          gd.n = n;
          gd.k = k;
          gd.a = ad.act_format();
          gd.w = WeightFormat::int8();
          gd.out_dtype = DType::kF32;
          Gemm g(gd, Device::cpu());
          ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
          ASSERT_EQ(gemm_a_scales_count(gd), static_cast<int64_t>(got.scales.size()));
          const Int8Tensor wt = quantize_int8(w.data(), n, k, false);
          const PackedWeight pw = g.pack(wt);
          std::vector<uint8_t> ws(g.workspace_size());
          auto run = [&](const Quantized& aq) {
            std::vector<float> out(static_cast<size_t>(m * n));
            GemmArgs args;
            args.a = aq.q.data();
            args.a_scales = aq.scales.data();
            args.a_zeros = aq.zeros.empty() ? nullptr : aq.zeros.data();
            args.w = pw.host_view();
            args.out = out.data();
            const Status st = g.run(args, ws.data());
            EXPECT_TRUE(st.ok()) << st.message();
            return out;
          };
          const std::vector<float> out = run(got);
          const std::vector<float> want = run(int8_host_quantizer(mode, x, m, k));
          ASSERT_EQ(out.size(), want.size());
          for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(bits_of(out[i]), bits_of(want[i])) << i;
          // Against the unquantized product (weights dequantized): int8 keeps ~1% per element.
          std::vector<float> wq(static_cast<size_t>(n * k)), exact(static_cast<size_t>(m * n));
          for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < k; ++c) wq[static_cast<size_t>(r * k + c)] = wt.dequant(r, c);
          gemm_nt_reference(x.data(), wq.data(), nullptr, m, n, k, exact.data());
          EXPECT_LE(relative_error(out.data(), exact.data(), m * n), 0.03);
        }
}

TEST(act_quant, int8_validation_errors) {
  const int64_t m = 4, k = 64;
  std::vector<uint8_t> x(static_cast<size_t>(m * k * 2)), q(static_cast<size_t>(m * k));
  std::vector<float> scales(static_cast<size_t>(m));
  std::vector<int32_t> zeros(static_cast<size_t>(m));
  ActQuantArgs a;
  a.x = x.data();
  a.q = q.data();
  a.scales = scales.data();
  a.zeros = zeros.data();
  for (ActQuantMode mode : kInt8Modes) {
    ActQuant op(make_desc(mode, DType::kF16, m, k), Device::cpu());
    ASSERT_TRUE(op.can_implement().ok()) << op.can_implement().message();
    EXPECT_TRUE(op.run(a, nullptr).ok());
    ActQuantArgs b = a;
    b.q = nullptr;
    EXPECT_NE(op.run(b, nullptr).message().find("q (the int8 codes) is null"), std::string::npos)
        << op.run(b, nullptr).message();
    b = a;
    b.scales = nullptr;
    EXPECT_NE(op.run(b, nullptr).message().find("scales is null"), std::string::npos);
    b = a;
    b.x = nullptr;
    EXPECT_NE(op.run(b, nullptr).message().find("x is null"), std::string::npos);
    // k not a multiple of 16: the reason names the int8 GEMM and the mode.
    ActQuantDesc d = make_desc(mode, DType::kF16, m, 40);
    const std::string msg = ActQuant(d, Device::cpu()).can_implement().message();
    EXPECT_NE(msg.find("k=40 must be a positive multiple of 16 (the int8 GEMM's requirement"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("mode=") + act_quant_mode_name(mode)), std::string::npos) << msg;
    d.k = 0;
    EXPECT_FALSE(ActQuant(d, Device::cpu()).can_implement().ok());
    d = make_desc(mode, DType::kF32, m, k);
    EXPECT_NE(ActQuant(d, Device::cpu()).can_implement().message().find("must be f16 or bf16"), std::string::npos);
  }
  // zeros: required for the zero-point mode, ignored by the symmetric one.
  ActQuantArgs b = a;
  b.zeros = nullptr;
  const std::string msg =
      ActQuant(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, DType::kBF16, m, k), Device::cpu()).run(b, nullptr).message();
  EXPECT_NE(msg.find("zeros is null (mode int8-per-token-zp writes m int32 zero points)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mode=int8-per-token-zp"), std::string::npos) << msg;
  EXPECT_TRUE(ActQuant(make_desc(ActQuantMode::kInt8PerToken, DType::kBF16, m, k), Device::cpu()).run(b, nullptr).ok());
  // The CUDA device: a reason when there is none; the int8 kernel's name when there is.
  const ActQuant cuda(make_desc(ActQuantMode::kInt8PerTokenZeroPoint, DType::kBF16, m, k), Device::cuda(0));
  if (cuda.can_implement().ok()) {
    EXPECT_EQ(cuda.kernel_name(), "smxx_int8_act_quant");
    EXPECT_EQ(cuda.workspace_size(), 0u);
  } else {
    EXPECT_EQ(cuda.can_implement().message().rfind("lowbit: ", 0), 0u) << cuda.can_implement().message();
    EXPECT_EQ(cuda.kernel_name(), "");
    EXPECT_EQ(cuda.run(a, nullptr).message(), cuda.can_implement().message());
  }
}


// ---------------------------------------------------------------------------------------
// int8 static per tensor
// ---------------------------------------------------------------------------------------
// Round half to even of a finite double, by hand (not std::nearbyint, which the library uses).
double naive_rne(double v) {
  const double f = std::floor(v), frac = v - f;  // exact: |v| < 2^128, f and v share the binade
  if (frac > 0.5) return f + 1.0;
  if (frac < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

// int8-static by the documented rule, computed independently: the quotient x / s in double
// rounded once to fp32 (div32: the IEEE fp32 quotient), NaN -> 0, rne by hand (+-inf kept), the
// zero point added exactly in double, the clamp. (The library adds z in fp32: the same after
// the clamp, since r + z is exact in fp32 while |r| <= 2^24 and clamps either way beyond.)
Quantized naive_int8_static(const std::vector<float>& x, int64_t m, int64_t k, float s, bool zero_point,
                            int32_t z) {
  Quantized out;
  out.q.resize(static_cast<size_t>(m * k));
  out.scales.assign(static_cast<size_t>(m), s);
  if (zero_point) out.zeros.assign(static_cast<size_t>(m), z);
  const double lo = zero_point ? -128.0 : -127.0;
  for (size_t i = 0; i < out.q.size(); ++i) {
    const float v = div32(x[i], s);
    double r = std::isnan(v) ? 0.0 : std::isinf(v) ? static_cast<double>(v) : naive_rne(v);
    if (zero_point) r += z;
    out.q[i] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(r, lo, 127.0)));
  }
  return out;
}

// The CPU path for int8-static, run twice with code poisons 0xFF and 0x00 (both agree, so every
// code was written), also checking what the CPU path reports about itself.
Quantized run_cpu_int8_static(const ActQuantDesc& d, const std::vector<uint8_t>& x, float s, int32_t z) {
  const ActQuant op(d, Device::cpu());
  EXPECT_EQ(op.workspace_size(), 0u);
  EXPECT_EQ(op.kernel_name(), "cpu_reference");
  EXPECT_EQ(op.scales_count(), d.m);
  const Quantized a = run_cpu(d, x, s, 0xFF, z);
  expect_same(run_cpu(d, x, s, 0x00, z), a, d.describe() + " (code poison 0x00 vs 0xFF)");
  EXPECT_EQ(a.zeros.size(), d.int8_zero_point ? static_cast<size_t>(d.m) : 0u);
  return a;
}

std::string static_case_name(const ActQuantDesc& d, float s, int32_t z, uint32_t seed) {
  std::ostringstream o;
  o << d.describe() << " s=" << s;
  if (d.int8_zero_point) o << " z=" << z;
  o << " seed=" << seed;
  return o.str();
}

// Bit for bit against the independent recomputation: every scale x every zero point (and
// none) x f16/bf16 x shapes, dense and with a row stride (garbage in the gaps).
TEST(act_quant, int8_static_matches_independent_recomputation) {
  for (DType t : kDTypes)
    for (float s : kInt8StaticScales)
      for (int zi = -1; zi < static_cast<int>(std::size(kInt8StaticZeros)); ++zi)
        for (int64_t m : {1, 3, 17})
          for (int64_t k : {16, 144, 4096}) {
            const bool zp = zi >= 0;
            const int32_t z = zp ? kInt8StaticZeros[zi] : 0;
            const int64_t ld = m == 17 ? k + 24 : 0;
            const uint32_t seed = g_seed++;
            std::mt19937 rng(seed);
            const ActQuantDesc d = make_int8_static_desc(t, m, k, zp, ld);
            const std::vector<float> x = make_int8_static_values(t, m, k, s, rng);
            const Quantized got =
                run_cpu_int8_static(d, encode_rows(x, t, m, k, ld == 0 ? k : ld, 30000.0f), s, z);
            expect_same(got, naive_int8_static(x, m, k, s, zp, z), static_case_name(d, s, z, seed));
            if (::testing::Test::HasFailure()) return;
          }
}

// Hand-computed codes: ties to even, both clamps, the zero point's shift and its clamps.
TEST(act_quant, int8_static_hand_computed) {
  for (DType t : kDTypes) {
    const int64_t k = 16;
    const float s = 0.5f;
    // x / s:                      0.5    1.5    -1.5   2.5    127    128   -128    -200
    const std::vector<float> x = {0.25f, 0.75f, -0.75f, 1.25f, 63.5f, 64.0f, -64.0f, -100.0f,
                                  // 125.5 -125.5  -0.5     0     -0     3.5   -2.5   65.5 (131)
                                  62.75f, -62.75f, -0.25f, 0.0f, -0.0f, 1.75f, -1.25f, 65.5f};
    const std::vector<uint8_t> bytes = encode_rows(x, t, 1, k, k, 0.0f);
    auto codes = [&](const Quantized& q) {
      std::vector<int> c;
      for (uint8_t b : q.q) c.push_back(static_cast<int8_t>(b));
      return c;
    };
    Quantized q = run_cpu_int8_static(make_int8_static_desc(t, 1, k, false), bytes, s, 0);
    EXPECT_EQ(codes(q), (std::vector<int>{0, 2, -2, 2, 127, 127, -127, -127, 126, -126, 0, 0, 0, 4, -2, 127}))
        << dtype_name(t);
    EXPECT_EQ(q.scales, std::vector<float>{s});
    EXPECT_TRUE(q.zeros.empty());
    q = run_cpu_int8_static(make_int8_static_desc(t, 1, k, true), bytes, s, -3);
    EXPECT_EQ(codes(q), (std::vector<int>{-3, -1, -5, -1, 124, 125, -128, -128, 123, -128, -3, -3, -3, 1, -5, 127}))
        << dtype_name(t);
    EXPECT_EQ(q.zeros, std::vector<int32_t>{-3});
    q = run_cpu_int8_static(make_int8_static_desc(t, 1, k, true), bytes, s, 127);
    EXPECT_EQ(codes(q), (std::vector<int>{127, 127, 125, 127, 127, 127, -1, -73, 127, 1, 127, 127, 127, 127, 125, 127}))
        << dtype_name(t);
    q = run_cpu_int8_static(make_int8_static_desc(t, 1, k, true), bytes, s, -128);
    EXPECT_EQ(codes(q), (std::vector<int>{-128, -126, -128, -126, -1, 0, -128, -128, -2, -128, -128, -128, -128, -124, -128, 3}))
        << dtype_name(t);
  }
}

// NaN / inf input and the values of s and z nobody validates: what the formulas give
// (act_quant.hpp), by hand and against the recomputation.
TEST(act_quant, int8_static_non_finite_and_unchecked_parameters) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  for (DType t : kDTypes) {
    const int64_t k = 16;
    const std::vector<float> x = {nan, -nan, inf, -inf, 0.0f, -0.0f, 1.0f, -1.0f,
                                  3.0f, -3.0f, 100.0f, -100.0f, 0.5f, -0.5f, 1e-3f, 7.0f};
    const std::vector<uint8_t> bytes = encode_rows(x, t, 1, k, k, 0.0f);
    std::vector<float> xr(x.size());  // x as the dtype holds it
    for (int64_t c = 0; c < k; ++c) xr[static_cast<size_t>(c)] = load_as_f32(bytes.data(), t, c);
    auto code = [](const Quantized& q, int c) { return static_cast<int>(static_cast<int8_t>(q.q[static_cast<size_t>(c)])); };
    for (bool zp : {false, true}) {
      const int32_t z = zp ? -3 : 0;
      const std::string what = std::string(dtype_name(t)) + (zp ? " z=-3" : " symmetric");
      const ActQuantDesc d = make_int8_static_desc(t, 1, k, zp);
      // s = 0.5: NaN -> 0 (z); +-inf clamps to the range ends.
      Quantized q = run_cpu_int8_static(d, bytes, 0.5f, z);
      EXPECT_EQ(code(q, 0), z) << what;
      EXPECT_EQ(code(q, 1), z) << what;
      EXPECT_EQ(code(q, 2), 127) << what;
      EXPECT_EQ(code(q, 3), zp ? -128 : -127) << what;
      // s = 0: +-inf quotients clamp, 0 / 0 = NaN -> 0 (z).
      q = run_cpu_int8_static(d, bytes, 0.0f, z);
      EXPECT_EQ(code(q, 4), z) << what;
      EXPECT_EQ(code(q, 6), 127) << what;
      EXPECT_EQ(code(q, 7), zp ? -128 : -127) << what;
      // s < 0 negates; s = +inf or NaN gives 0 (z) everywhere.
      q = run_cpu_int8_static(d, bytes, -0.5f, z);
      EXPECT_EQ(code(q, 8), -6 + z) << what;
      for (float bad : {inf, nan}) {
        q = run_cpu_int8_static(d, bytes, bad, z);
        for (int c = 0; c < k; ++c) EXPECT_EQ(code(q, c), z) << what << " s=" << bad << " c=" << c;
      }
      for (float sv : {0.5f, 0.0f, -0.0f, -0.5f, inf, -inf, nan, 1e-40f, 3.0e38f}) {
        q = run_cpu_int8_static(d, bytes, sv, z);
        expect_same(q, naive_int8_static(xr, 1, k, sv, zp, z), what + " s=" + std::to_string(sv));
      }
    }
    // The scale is copied bit for bit, a NaN's payload included (the poison is another NaN).
    uint32_t payload_bits = 0x7FC01234u;
    float payload;
    std::memcpy(&payload, &payload_bits, sizeof payload);
    std::vector<float> two_rows = x;
    two_rows.insert(two_rows.end(), x.begin(), x.end());
    const Quantized q =
        run_cpu_int8_static(make_int8_static_desc(t, 2, k, false), encode_rows(two_rows, t, 2, k, k, 0.0f), payload, 0);
    for (float sc : q.scales) EXPECT_EQ(bits_of(sc), payload_bits);
    // A zero point outside [-128, 127] is written as given; the codes stay clamped.
    for (int32_t z : {1000, -1000, (1 << 24) + 1, std::numeric_limits<int32_t>::min()}) {
      const ActQuantDesc d = make_int8_static_desc(t, 1, k, true);
      const Quantized qz = run_cpu_int8_static(d, bytes, 0.5f, z);
      EXPECT_EQ(qz.zeros, std::vector<int32_t>{z});
      expect_same(qz, naive_int8_static(xr, 1, k, 0.5f, true, z), std::string(dtype_name(t)) + " z=" + std::to_string(z));
    }
  }
}

// The outputs drive the CPU int8 GEMM as they are (GemmArgs::a / a_scales / a_zeros, GemmDesc::a
// = act_format()): its result equals the fp32 GEMM on the dequantized activations (q - z) * s
// within fp32 rounding; with s and z calibrated to the data, it is also near the unquantized
// product.
TEST(act_quant, int8_static_outputs_drive_cpu_gemm) {
  const int64_t n = 48;
  for (DType t : kDTypes)
    for (int zi = -2; zi < static_cast<int>(std::size(kInt8StaticZeros)); ++zi)  // -2: none, -1: calibrated
      for (int64_t m : {1, 5, 64})
        for (int64_t k : {144, 512}) {
          const uint32_t seed = g_seed++;
          std::mt19937 rng(seed);
          const bool zp = zi >= -1;
          std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k));
          std::normal_distribution<float> normal(0.0f, 1.0f);
          for (float& v : x) v = normal(rng) + 0.75f;  // shifted: a calibrated zero point away from 0
          for (float& v : w) v = normal(rng);
          const std::vector<uint8_t> xb = encode_rows(x, t, m, k, k, 0.0f);
          for (int64_t i = 0; i < m * k; ++i) x[static_cast<size_t>(i)] = load_as_f32(xb.data(), t, i);
          // Calibrated parameters (what a checkpoint's input_scale / input_zero_point hold), or a
          // given zero point with the zero-point range's scale.
          const auto [lo_it, hi_it] = std::minmax_element(x.begin(), x.end());
          const float lo = std::min(*lo_it, 0.0f), hi = std::max(*hi_it, 0.0f);
          const float s = zp ? (hi - lo) / 255.0f : std::max(-lo, hi) / 127.0f;
          const int32_t z = zi >= 0 ? kInt8StaticZeros[zi]
                                    : static_cast<int32_t>(std::clamp(std::nearbyint(-128.0f - lo / s), -128.0f, 127.0f));
          const ActQuantDesc ad = make_int8_static_desc(t, m, k, zp);
          SCOPED_TRACE(static_case_name(ad, s, z, seed));
          const Quantized got = run_cpu_int8_static(ad, xb, s, z);

          GemmDesc gd;
          gd.m = m;
          gd.n = n;
          gd.k = k;
          gd.a = ad.act_format();
          ASSERT_EQ(gd.a.int8_zero_point, zp);
          gd.w = WeightFormat::int8();
          gd.out_dtype = DType::kF32;
          Gemm g(gd, Device::cpu());
          ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
          ASSERT_EQ(gemm_a_scales_count(gd), static_cast<int64_t>(got.scales.size()));
          const Int8Tensor wt = quantize_int8(w.data(), n, k, false);
          const PackedWeight pw = g.pack(wt);
          std::vector<uint8_t> ws(g.workspace_size());
          std::vector<float> out(static_cast<size_t>(m * n));
          GemmArgs args;
          args.a = got.q.data();
          args.a_scales = got.scales.data();
          args.a_zeros = zp ? got.zeros.data() : nullptr;
          args.w = pw.host_view();
          args.out = out.data();
          const Status st = g.run(args, ws.data());
          ASSERT_TRUE(st.ok()) << st.message();
          // The GEMM on the dequantized activations (q - z) * s, in fp32.
          std::vector<float> aq(static_cast<size_t>(m * k)), wq(static_cast<size_t>(n * k)),
              want(static_cast<size_t>(m * n)), exact(static_cast<size_t>(m * n));
          for (size_t i = 0; i < aq.size(); ++i)
            aq[i] = (static_cast<float>(static_cast<int8_t>(got.q[i])) - static_cast<float>(zp ? z : 0)) * s;
          for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < k; ++c) wq[static_cast<size_t>(r * k + c)] = wt.dequant(r, c);
          gemm_nt_reference(aq.data(), wq.data(), nullptr, m, n, k, want.data());
          EXPECT_LE(relative_error(out.data(), want.data(), m * n), 1e-5);
          // Not all zero, unless every activation code is the zero point (z = 127 clips the
          // positive values).
          const int8_t zc = static_cast<int8_t>(zp ? z : 0);
          if (std::any_of(got.q.begin(), got.q.end(), [&](uint8_t c) { return static_cast<int8_t>(c) != zc; }))
            EXPECT_FALSE(std::all_of(out.begin(), out.end(), [](float v) { return v == 0.0f; }));
          if (zi < 0) {  // calibrated: int8 keeps ~1% per element
            gemm_nt_reference(x.data(), wq.data(), nullptr, m, n, k, exact.data());
            EXPECT_LE(relative_error(out.data(), exact.data(), m * n), 0.03);
          }
        }
}

TEST(act_quant, int8_static_names_and_errors) {
  const int64_t m = 4, k = 64;
  EXPECT_STREQ(act_quant_mode_name(ActQuantMode::kInt8StaticPerTensor), "int8-static");
  EXPECT_TRUE(act_quant_is_int8(ActQuantMode::kInt8StaticPerTensor));
  EXPECT_EQ(act_quant_scaling(ActQuantMode::kInt8StaticPerTensor), Fp8Scaling::kPerRow);
  for (bool zp : {false, true}) {
    const ActQuantDesc d = make_int8_static_desc(DType::kBF16, m, k, zp);
    const ActFormat f = d.act_format();
    EXPECT_EQ(f.dtype, DType::kI8);
    EXPECT_EQ(f.int8_zero_point, zp);
    EXPECT_EQ(f.fp8_scaling, ActFormat{}.fp8_scaling);
    const ActQuant op(d, Device::cpu());
    ASSERT_TRUE(op.can_implement().ok()) << op.can_implement().message();
    EXPECT_EQ(op.scales_count(), m);
    EXPECT_EQ(op.workspace_size(), 0u);
  }
  EXPECT_EQ(make_int8_static_desc(DType::kF16, 2, 32, true, 48).describe(),
            "m=2 k=32 x=f16 mode=int8-static x_row_stride=48 int8_zero_point");
  EXPECT_EQ(make_int8_static_desc(DType::kF16, 2, 32, false).describe(), "m=2 k=32 x=f16 mode=int8-static");
  // int8_zero_point belongs to int8-static only.
  for (ActQuantMode mode : {ActQuantMode::kDynamicPerToken, ActQuantMode::kStaticPerTensor, ActQuantMode::kInt8PerToken,
                            ActQuantMode::kInt8PerTokenZeroPoint}) {
    ActQuantDesc d = make_desc(mode, DType::kF16, m, k);
    d.int8_zero_point = true;
    const std::string msg = ActQuant(d, Device::cpu()).can_implement().message();
    EXPECT_NE(msg.find("int8_zero_point is on, but only mode int8-static reads it"), std::string::npos) << msg;
  }
  ActQuantDesc d9 = make_desc(static_cast<ActQuantMode>(9), DType::kF16, m, k);
  EXPECT_NE(ActQuant(d9, Device::cpu()).can_implement().message().find("int8-static)"), std::string::npos);

  // run(): the static parameters against the flag, and the overlaps.
  std::vector<uint8_t> x(static_cast<size_t>(m * k * 2)), q(static_cast<size_t>(m * k));
  std::vector<float> scales(static_cast<size_t>(m) + 1);
  std::vector<int32_t> zeros(static_cast<size_t>(m) + 1);
  float s = 0.5f;
  int32_t z = 7;
  ActQuantArgs a;
  a.x = x.data();
  a.q = q.data();
  a.scales = scales.data();
  a.zeros = zeros.data();
  a.static_scale = &s;
  a.static_zero_point = &z;
  const ActQuant sym(make_int8_static_desc(DType::kF16, m, k, false), Device::cpu());
  const ActQuant zp(make_int8_static_desc(DType::kF16, m, k, true), Device::cpu());
  auto message = [](const ActQuant& op, const ActQuantArgs& args) { return op.run(args, nullptr).message(); };
  EXPECT_EQ(message(zp, a), "");
  EXPECT_EQ(zeros[0], 7);
  EXPECT_EQ(scales[3], 0.5f);
  ActQuantArgs b = a;
  b.static_scale = nullptr;
  for (const ActQuant* op : {&sym, &zp})
    EXPECT_NE(message(*op, b).find("static_scale is null (mode int8-static needs the caller's scale)"), std::string::npos)
        << message(*op, b);
  b = a;
  b.static_zero_point = nullptr;
  EXPECT_NE(message(zp, b).find("static_zero_point is null, but ActQuantDesc::int8_zero_point is on"), std::string::npos)
      << message(zp, b);
  EXPECT_EQ(message(sym, b), "");
  EXPECT_NE(message(sym, a).find("static_zero_point is given, but ActQuantDesc::int8_zero_point is off"), std::string::npos)
      << message(sym, a);
  b = a;
  b.zeros = nullptr;
  EXPECT_NE(message(zp, b).find("zeros is null (mode int8-static with int8_zero_point writes m int32 zero points)"),
            std::string::npos)
      << message(zp, b);
  b.static_zero_point = nullptr;
  EXPECT_EQ(message(sym, b), "");  // symmetric: zeros unused
  // scales / zeros must not overlap the parameters they are filled from.
  b = a;
  b.static_scale = scales.data() + m - 1;
  EXPECT_NE(message(zp, b).find("scales (m floats) overlaps static_scale"), std::string::npos) << message(zp, b);
  b.static_scale = scales.data() + m;  // just past: fine
  EXPECT_EQ(message(zp, b), "");
  b = a;
  b.static_zero_point = zeros.data();
  EXPECT_NE(message(zp, b).find("zeros (m int32) overlaps static_zero_point"), std::string::npos) << message(zp, b);
  b.static_zero_point = zeros.data() + m;
  EXPECT_EQ(message(zp, b), "");
  b.zeros = nullptr;
  b.static_zero_point = nullptr;
  b.static_scale = scales.data();  // symmetric: zeros unused, but scales still overlaps
  EXPECT_NE(message(sym, b).find("overlaps static_scale"), std::string::npos);

  // The CUDA device: a reason when there is none; the int8 kernel's name when there is.
  const ActQuant cuda(make_int8_static_desc(DType::kBF16, m, k, true), Device::cuda(0));
  if (cuda.can_implement().ok()) {
    EXPECT_EQ(cuda.kernel_name(), "smxx_int8_act_quant");
    EXPECT_EQ(cuda.workspace_size(), 0u);
  } else {
    EXPECT_EQ(cuda.can_implement().message().rfind("lowbit: ", 0), 0u) << cuda.can_implement().message();
    EXPECT_EQ(cuda.run(a, nullptr).message(), cuda.can_implement().message());
  }
}

}  // namespace
