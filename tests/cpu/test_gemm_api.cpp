// The public lowbit::Gemm API on the CPU device: every format through describe ->
// can_implement -> pack -> run, against a naive fp64 loop over the canonical operands'
// element-wise dequant() (independent of the reference's row dequantizers), plus the
// refusals and argument errors a user can hit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "lowbit/lowbit.hpp"

namespace {

using namespace lowbit;

std::mt19937& rng() {
  static std::mt19937 r(12345);
  return r;
}
std::vector<float> random_floats(int64_t count, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = d(rng());
  return v;
}

// Activations of `t` holding round_to(t, x): returns the buffer bytes and fills `values`.
std::vector<uint8_t> make_float_act(DType t, int64_t count, std::vector<float>& values) {
  values = random_floats(count);
  std::vector<uint8_t> buf(static_cast<size_t>(count) * dtype_size(t));
  for (int64_t i = 0; i < count; ++i) {
    store_from_f32(buf.data(), t, i, values[i]);
    values[i] = load_as_f32(buf.data(), t, i);
  }
  return buf;
}

// out(m, n) = sum_k a(m, k) * w(n, k) in fp64; `wval(n, k)` gives the dequantized weight.
template <typename W>
std::vector<float> naive(const std::vector<float>& a, W wval, int64_t m, int64_t n, int64_t k) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * wval(j, p);
      c[i * n + j] = static_cast<float>(s);
    }
  return c;
}

std::vector<float> run_cpu(const Gemm& g, const GemmArgs& args_in) {
  GemmArgs args = args_in;
  const GemmDesc& d = g.desc();
  std::vector<float> out(static_cast<size_t>(d.m * d.n), NAN);  // poisoned
  args.out = out.data();
  std::vector<uint8_t> ws(g.workspace_size());
  Status s = g.run(args, ws.data());
  EXPECT_TRUE(s.ok()) << s.message();
  for (float v : out) EXPECT_TRUE(std::isfinite(v)) << d.describe();
  return out;
}

GemmDesc base_desc(int64_t m, int64_t n, int64_t k) {
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.out_dtype = DType::kF32;  // fp32 out: compare the computation, not the output rounding
  return d;
}

TEST(CpuGemm, dense_f16_bf16_f32_with_bias) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32}) {
    const int64_t m = 3, n = 17, k = 65;
    GemmDesc d = base_desc(m, n, k);
    d.a.dtype = t;
    d.w = WeightFormat::dense(t);
    d.has_bias = true;
    Gemm g(d, Device::cpu());
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    EXPECT_EQ(g.kernel_name(), "cpu_reference");
    std::vector<float> av, wv;
    auto a = make_float_act(t, m * k, av);
    auto w = make_float_act(t, n * k, wv);
    std::vector<float> bias = random_floats(n);
    PackedWeight p = g.pack_dense(w.data());
    GemmArgs args;
    args.a = a.data();
    args.w = p.host_view();
    args.bias = bias.data();
    auto out = run_cpu(g, args);
    auto ref = naive(av, [&](int64_t j, int64_t p) { return wv[j * k + p]; }, m, n, k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) ref[i * n + j] += bias[j];
    EXPECT_LT(relative_error(out.data(), ref.data(), m * n), 1e-6) << dtype_name(t);
  }
}

TEST(CpuGemm, int_weights_every_width_group_zero_mode) {
  const int64_t m = 2, n = 15, k = 256;
  for (int bits = 1; bits <= 8; ++bits)
    for (int gs : {0, 32, 64, 128})
      for (ZeroPoint z : {ZeroPoint::kSymmetric, ZeroPoint::kInteger, ZeroPoint::kFloat})
        for (DType a_t : {DType::kF16, DType::kBF16}) {
          IntWeightFormat f;
          f.bits = bits;
          f.group_size = gs;
          f.zero = z;
          f.scale_dtype = a_t;
          const auto w = random_floats(n * k);
          IntWeight qw = quantize_int(w.data(), n, k, f);
          GemmDesc d = base_desc(m, n, k);
          d.a.dtype = a_t;
          d.w = WeightFormat::integer(f);
          Gemm g(d, Device::cpu());
          ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
          std::vector<float> av;
          auto a = make_float_act(a_t, m * k, av);
          PackedWeight p = g.pack(qw);
          GemmArgs args;
          args.a = a.data();
          args.w = p.host_view();
          auto out = run_cpu(g, args);
          auto ref = naive(av, [&](int64_t j, int64_t c) { return qw.dequant(j, c); }, m, n, k);
          EXPECT_LT(relative_error(out.data(), ref.data(), m * n), 1e-6) << f.name();
        }
}

TEST(CpuGemm, int_weights_act_order) {
  const int64_t m = 3, n = 8, k = 256;
  IntWeightFormat f = *IntWeightFormat::parse("w4g64-act");
  std::vector<int32_t> g_idx(k);
  std::uniform_int_distribution<int32_t> gd(0, static_cast<int32_t>(k / 64 - 1));
  for (auto& g : g_idx) g = gd(rng());
  const auto w = random_floats(n * k);
  IntWeight qw = quantize_int(w.data(), n, k, f, g_idx.data());
  GemmDesc d = base_desc(m, n, k);
  d.w = WeightFormat::integer(f);
  Gemm g(d, Device::cpu());
  ASSERT_TRUE(g.can_implement().ok());
  std::vector<float> av;
  auto a = make_float_act(DType::kF16, m * k, av);
  PackedWeight p = g.pack(qw);
  GemmArgs args;
  args.a = a.data();
  args.w = p.host_view();
  auto out = run_cpu(g, args);
  auto ref = naive(av, [&](int64_t j, int64_t c) { return qw.dequant(j, c); }, m, n, k);
  EXPECT_LT(relative_error(out.data(), ref.data(), m * n), 1e-6);
  // Without g_idx the run is refused, not computed with a wrong grouping.
  args.w.index = nullptr;
  std::vector<float> out2(m * n);
  args.out = out2.data();
  std::vector<uint8_t> ws(g.workspace_size());
  EXPECT_FALSE(g.run(args, ws.data()).ok());
}

TEST(CpuGemm, fp8_every_scaling_pair) {
  const int64_t m = 5, n = 130, k = 300;  // partial 128 blocks in both n and k
  for (DType t : {DType::kE4M3, DType::kE5M2})
    for (Fp8Scaling as : {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow, Fp8Scaling::kBlock1x128})
      for (Fp8Scaling ws : {Fp8Scaling::kPerTensor, Fp8Scaling::kPerRow,
                            Fp8Scaling::kBlock128x128}) {
        const auto x = random_floats(m * k, -3.f, 3.f);
        const auto w = random_floats(n * k, -0.5f, 0.5f);
        Fp8Tensor qa = quantize_fp8(x.data(), m, k, Fp8Format{t, as});
        Fp8Tensor qw = quantize_fp8(w.data(), n, k, Fp8Format{t, ws});
        GemmDesc d = base_desc(m, n, k);
        d.a.dtype = t;
        d.a.fp8_scaling = as;
        d.w = WeightFormat::fp8_format(Fp8Format{t, ws});
        d.out_dtype = DType::kBF16;
        Gemm g(d, Device::cpu());
        ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
        PackedWeight p = g.pack(qw);
        GemmArgs args;
        args.a = qa.codes.data();
        const std::vector<float> a_scales = gemm_a_scales(qa);  // run()'s layout
        args.a_scales = a_scales.data();
        args.w = p.host_view();
        std::vector<uint16_t> out(m * n);
        args.out = out.data();
        std::vector<uint8_t> wsp(g.workspace_size());
        ASSERT_TRUE(g.run(args, wsp.data()).ok());
        std::vector<float> got(m * n);
        for (int64_t i = 0; i < m * n; ++i) got[i] = bf16_to_f32(out[i]);
        std::vector<float> av(m * k);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t c = 0; c < k; ++c) av[i * k + c] = qa.dequant(i, c);
        auto ref = naive(av, [&](int64_t j, int64_t c) { return qw.dequant(j, c); }, m, n, k);
        // bf16 output rounding: at most 2^-9 relative per element.
        EXPECT_LT(relative_error(got.data(), ref.data(), m * n), 4e-3)
            << d.describe();
      }
}

TEST(CpuGemm, int8_with_and_without_zero_points) {
  const int64_t m = 4, n = 33, k = 96;
  for (bool zp : {false, true}) {
    const auto x = random_floats(m * k, -2.f, 5.f);
    const auto w = random_floats(n * k);
    Int8Tensor qa = quantize_int8(x.data(), m, k, zp);
    Int8Tensor qw = quantize_int8(w.data(), n, k, false);
    GemmDesc d = base_desc(m, n, k);
    d.a.dtype = DType::kI8;
    d.a.int8_zero_point = zp;
    d.w = WeightFormat::int8();
    Gemm g(d, Device::cpu());
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    PackedWeight p = g.pack(qw);
    GemmArgs args;
    args.a = qa.codes.data();
    args.a_scales = qa.scales.data();
    args.a_zeros = zp ? qa.zeros.data() : nullptr;
    args.w = p.host_view();
    auto out = run_cpu(g, args);
    std::vector<float> av(m * k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t c = 0; c < k; ++c) av[i * k + c] = qa.dequant(i, c);
    auto ref = naive(av, [&](int64_t j, int64_t c) { return qw.dequant(j, c); }, m, n, k);
    EXPECT_LT(relative_error(out.data(), ref.data(), m * n), 1e-6) << "zero point " << zp;
  }
}

TEST(CpuGemm, refusals_name_the_problem) {
  GemmDesc d = base_desc(1, 64, 4100);
  d.w = WeightFormat::integer(*IntWeightFormat::parse("w4g128"));
  Status s = Gemm(d, Device::cpu()).can_implement();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("K=4100 is not a multiple of group_size=128"), std::string::npos)
      << s.message();

  d = base_desc(0, 64, 128);
  d.w = WeightFormat::dense(DType::kF16);
  EXPECT_FALSE(Gemm(d, Device::cpu()).can_implement().ok());

  d = base_desc(1, 64, 128);
  d.a.dtype = DType::kF16;
  d.w = WeightFormat::dense(DType::kBF16);
  s = Gemm(d, Device::cpu()).can_implement();
  EXPECT_NE(s.message().find("one dtype"), std::string::npos) << s.message();

  d.w = WeightFormat::fp8_format(Fp8Format{});
  s = Gemm(d, Device::cpu()).can_implement();
  EXPECT_NE(s.message().find("fp8 activations"), std::string::npos) << s.message();

  d.w = WeightFormat::int8();
  s = Gemm(d, Device::cpu()).can_implement();
  EXPECT_NE(s.message().find("int8 activations"), std::string::npos) << s.message();
}

TEST(CpuGemm, cuda_device_without_gpu_is_refused_with_a_reason) {
  if (!list_gpus().empty()) GTEST_SKIP() << "a CUDA device is present";
  GemmDesc d = base_desc(1, 64, 128);
  d.w = WeightFormat::dense(DType::kF16);
  Gemm g(d, Device::cuda(0));
  Status s = g.can_implement();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("lowbit: ", 0), 0u) << s.message();
  EXPECT_EQ(g.workspace_size(), 0u);
  GemmArgs args;
  EXPECT_FALSE(g.run(args, nullptr).ok());
}

TEST(CpuGemm, pack_checks_format_and_shape) {
  GemmDesc d = base_desc(1, 16, 128);
  d.w = WeightFormat::integer(*IntWeightFormat::parse("w4g128"));
  Gemm g(d, Device::cpu());
  const auto w = random_floats(16 * 128);
  IntWeight other = quantize_int(w.data(), 16, 128, *IntWeightFormat::parse("w8"));
  EXPECT_THROW(g.pack(other), Error);
  const auto w2 = random_floats(8 * 128);
  IntWeight small = quantize_int(w2.data(), 8, 128, *IntWeightFormat::parse("w4g128"));
  try {
    g.pack(small);
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(8, 128)"), std::string::npos) << e.what();
  }
  IntWeight broken = quantize_int(w.data(), 16, 128, *IntWeightFormat::parse("w4g128"));
  broken.codes[5] = 16;  // out of range for 4 bits
  EXPECT_THROW(g.pack(broken), Error);
}

TEST(CpuGemm, run_reports_missing_operands) {
  GemmDesc d = base_desc(2, 16, 128);
  d.w = WeightFormat::integer(*IntWeightFormat::parse("w4g128-asym"));
  Gemm g(d, Device::cpu());
  const auto w = random_floats(16 * 128);
  PackedWeight p = g.pack(quantize_int(w.data(), 16, 128, d.w.int_format));
  std::vector<float> av;
  auto a = make_float_act(DType::kF16, 2 * 128, av);
  std::vector<float> out(32);
  std::vector<uint8_t> ws(g.workspace_size());
  GemmArgs args;
  args.a = a.data();
  args.w = p.host_view();
  args.out = out.data();
  ASSERT_TRUE(g.run(args, ws.data()).ok());
  GemmArgs no_zeros = args;
  no_zeros.w.zeros = nullptr;
  Status s = g.run(no_zeros, ws.data());
  EXPECT_NE(s.message().find("zero points"), std::string::npos) << s.message();
  GemmArgs no_a = args;
  no_a.a = nullptr;
  s = g.run(no_a, ws.data());
  EXPECT_NE(s.message().find("A (activations)"), std::string::npos) << s.message();
  EXPECT_FALSE(g.run(args, nullptr).ok());
}

}  // namespace
