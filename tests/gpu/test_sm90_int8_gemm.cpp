// sm90_int8_gemm (Hopper TMA + s8 wgmma W8A8 GEMM) through the public lowbit::Gemm API,
// against an independent reference: the exact int64 sum of the int8 codes, then the token
// zero point, scales and bias in double (int8_gemm_common.hpp). One case per mode is also
// checked against the CPU backend (the documented oracle), so both read the same conventions.
//
// Every case: random operands with rows of different magnitudes (so the per-token and
// per-channel scales differ), output poisoned (NaN) before the run, then: every element
// written and finite, relative Frobenius error <= the output rounding (f16 1e-3, bf16 8e-3).
// Forced plans cover every tile configuration and split counts; shapes cover partial tiles
// along m and n, k = 16 (one partial K block), k = 400; the largest k the contract allows with
// the largest products checks that the int32 sums do not overflow.
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/fp8_gemm/sm90_fp8_gemm_params.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"
#include "cuda/int8_gemm/sm90_int8_gemm_family.hpp"
#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "test_gpu_common.hpp"

namespace lowbit::test {
namespace {

constexpr const char* kFamily = "sm90_int8_gemm";

bool on_hopper() {
  const std::vector<GpuInfo> gpus = list_gpus();
  return !gpus.empty() && gpus[0].cc() == 90;
}

#define LOWBIT_REQUIRE_HOPPER()                                      \
  do {                                                               \
    LOWBIT_REQUIRE_GPU();                                            \
    if (!on_hopper()) GTEST_SKIP() << "sm90_int8_gemm needs sm_90"; \
  } while (0)

GemmDesc desc_of(int64_t m, int64_t n, int64_t k, bool zp, DType out, bool bias) {
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a.dtype = DType::kI8;
  d.a.int8_zero_point = zp;
  d.w = WeightFormat::int8();
  d.out_dtype = out;
  d.has_bias = bias;
  return d;
}

std::vector<float> graded(std::mt19937& rng, int64_t rows, int64_t cols) {
  std::vector<float> v = random_normal(rng, rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      v[static_cast<std::size_t>(r * cols + c)] *= std::ldexp(1.0f, static_cast<int>(r * 5 % 7) - 3);
  return v;
}

struct Operands {
  Int8Tensor qa, qw;
  std::vector<float> bias;  // rounded to the output dtype
  std::vector<float> ref;
};

// The reference: exact integer sums, then double.
void compute_reference(const GemmDesc& d, Operands& o) {
  o.ref.assign(static_cast<std::size_t>(d.m * d.n), 0.f);
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      int64_t acc = 0, wsum = 0;
      for (int64_t c = 0; c < d.k; ++c) {
        acc += int64_t(o.qa.codes[i * d.k + c]) * o.qw.codes[j * d.k + c];
        wsum += o.qw.codes[j * d.k + c];
      }
      const int64_t z = o.qa.has_zero_point() ? o.qa.zeros[i] : 0;
      double v = double(acc - z * wsum) * o.qa.scales[i] * o.qw.scales[j];
      if (d.has_bias) v += o.bias[j];
      o.ref[i * d.n + j] = static_cast<float>(v);
    }
}

Operands make_operands(const GemmDesc& d, uint32_t seed) {
  std::mt19937 rng(seed);
  Operands o;
  const std::vector<float> w = graded(rng, d.n, d.k);
  o.qw = quantize_int8(w.data(), d.n, d.k, false);
  std::vector<float> a = graded(rng, d.m, d.k);
  // Shifted rows, so that the zero points are far from 0.
  if (d.a.int8_zero_point)
    for (int64_t r = 0; r < d.m; ++r)
      for (int64_t c = 0; c < d.k; ++c) a[r * d.k + c] += static_cast<float>((r % 3) - 1) * 1.5f;
  o.qa = quantize_int8(a.data(), d.m, d.k, d.a.int8_zero_point);
  if (d.has_bias) o.bias = rounded(random_normal(rng, d.n), d.out_dtype);
  compute_reference(d, o);
  return o;
}

// Device copies of one problem's operands and a run of `impl` on them.
struct Call {
  DeviceBuffer a, as, az, w, ws, wz, bias, out, workspace;
  GemmArgs args;
  Call(const GemmDesc& d, const PackedWeight& pw, const Operands& o, std::size_t workspace_bytes)
      : a(o.qa.codes),
        as(o.qa.scales),
        az(o.qa.zeros),
        w(pw.data),
        ws(pw.scales),
        wz(pw.zeros),
        bias(d.has_bias ? encode(o.bias, d.out_dtype) : std::vector<uint8_t>()),
        out(static_cast<std::size_t>(d.m * d.n) * dtype_size(d.out_dtype)),
        workspace(workspace_bytes) {
    args.a = a.get();
    args.a_scales = as.get();
    args.a_zeros = d.a.int8_zero_point ? az.get() : nullptr;
    args.w = WeightView{w.get(), ws.get(), wz.get(), nullptr};
    args.bias = d.has_bias ? bias.get() : nullptr;
    args.out = out.get();
  }
};

double tolerance(DType out) { return out == DType::kBF16 ? 8e-3 : 1e-3; }

void expect_close(const GemmDesc& d, const std::vector<uint8_t>& bytes, const std::vector<float>& ref,
                  const std::string& what) {
  const std::vector<float> out = decode(bytes, d.out_dtype, d.m * d.n);
  ASSERT_EQ(count_non_finite(out), 0) << "outputs not written or not finite: " << what;
  EXPECT_FALSE(all_zero(out)) << what;
  const double err = relative_error(out.data(), ref.data(), static_cast<int64_t>(out.size()));
  EXPECT_LE(err, tolerance(d.out_dtype)) << "relative Frobenius error " << err << ": " << what;
}

// Through the public API and the heuristic's plan; returns the output bytes.
uint32_t seed_of(int64_t m, int64_t n, int64_t k, bool zp) { return static_cast<uint32_t>(m * 131 + n * 7 + k + (zp ? 1 : 0)); }

std::vector<uint8_t> run_case(int64_t m, int64_t n, int64_t k, bool zp, DType out, bool bias) {
  const GemmDesc d = desc_of(m, n, k, zp, out, bias);
  SCOPED_TRACE(d.describe());
  Gemm g(d, Device::cuda(0), GemmOptions{kFamily});
  EXPECT_TRUE(g.can_implement().ok()) << g.can_implement().message();
  if (!g.can_implement().ok()) return {};
  EXPECT_EQ(g.weight_layout(), cuda::kInt8NkLayout);
  const Operands o = make_operands(d, seed_of(m, n, k, zp));
  Call c(d, g.pack(o.qw), o, g.workspace_size());
  StreamHolder s;
  c.out.poison(s.get());
  c.workspace.poison(s.get());
  const Status st = g.run(c.args, c.workspace.get(), s.get());
  EXPECT_TRUE(st.ok()) << st.message();
  s.sync();
  const std::vector<uint8_t> bytes = c.out.download();
  expect_close(d, bytes, o.ref, d.describe() + ", kernel " + g.kernel_name());
  return bytes;
}

// Through a forced plan (the implementation directly).
void run_plan(int64_t m, int64_t n, int64_t k, bool zp, int config, int splits) {
  const GemmDesc d = desc_of(m, n, k, zp, DType::kBF16, true);
  const std::string what = d.describe() + " config " + cuda::kSm90Fp8Configs[config].tag + " splits " +
                           std::to_string(splits);
  SCOPED_TRACE(what);
  const Operands o = make_operands(d, static_cast<uint32_t>(7 * config + splits));
  auto impl = cuda::sm90_int8_gemm_make_with_plan(d, cuda::gpu_spec(0), cuda::Sm90Fp8Plan{config, splits, 0, 0, ""});
  Call c(d, impl->pack(o.qw), o, impl->workspace_size());
  StreamHolder s;
  c.out.poison(s.get());
  c.workspace.poison(s.get());
  const Status st = impl->run(c.args, c.workspace.get(), s.get());
  ASSERT_TRUE(st.ok()) << st.message();
  s.sync();
  expect_close(d, c.out.download(), o.ref, what + ", " + impl->name());
}

TEST(sm90_int8_gemm, symmetric_and_zero_point) {
  LOWBIT_REQUIRE_HOPPER();
  for (bool zp : {false, true}) {
    for (int64_t m : {1, 2, 7, 16, 33, 64, 65, 100, 257}) (void)run_case(m, 256, 512, zp, DType::kBF16, zp);
    for (int64_t m : {1, 64, 129}) (void)run_case(m, 576, 7168, zp, DType::kF16, true);
  }
  if (!small_mode()) {
    (void)run_case(1024, 4096, 4096, true, DType::kF16, false);
    (void)run_case(300, 4096, 14336, false, DType::kBF16, true);
  }
}

// Partial tiles along m and n, the smallest shape, one partial K block.
TEST(sm90_int8_gemm, edges) {
  LOWBIT_REQUIRE_HOPPER();
  for (bool zp : {false, true})
    for (int64_t m : {1, 17, 70}) {
      (void)run_case(m, 144, 400, zp, DType::kBF16, true);
      (void)run_case(m, 16, 16, zp, DType::kF16, false);
      (void)run_case(m, 208, 128, zp, DType::kBF16, false);
    }
}

TEST(sm90_int8_gemm, forced_plans) {
  LOWBIT_REQUIRE_HOPPER();
  for (int c = 0; c < cuda::kSm90Fp8ConfigCount; ++c) {
    if (!cuda::kSm90Fp8Configs[c].int8) {  // fp8-only widths: refused by name
      const GemmDesc d = desc_of(200, 320, 7 * 128 - 48, false, DType::kF16, false);
      EXPECT_THROW((void)cuda::sm90_int8_gemm_make_with_plan(d, cuda::gpu_spec(0), cuda::Sm90Fp8Plan{c, 1, 0, 0, ""}),
                   Error)
          << cuda::kSm90Fp8Configs[c].tag;
      continue;
    }
    for (int splits : {1, 2, 3, 7})
      for (bool zp : {false, true}) run_plan(cuda::kSm90Fp8Configs[c].consumers == 2 ? 200 : 70, 320, 7 * 128 - 48, zp, c, splits);
  }
}

// The largest products (-128 x -128, and with the zero point |q - z| = 255) at the largest k
// the contract allows: the int32 sums sit just below 2^31 and must not wrap.
TEST(sm90_int8_gemm, largest_sums_do_not_overflow) {
  LOWBIT_REQUIRE_HOPPER();
  const int64_t m = 3, n = 64, k = cuda::kInt8GemmMaxK;
  for (bool zp : {false, true}) {
    const GemmDesc d = desc_of(m, n, k, zp, DType::kF16, false);
    Operands o;
    o.qa.rows = m;
    o.qa.cols = k;
    o.qa.codes.assign(static_cast<std::size_t>(m * k), int8_t(-128));
    o.qa.scales = {1e-5f, 2e-5f, 4e-5f};
    if (zp) o.qa.zeros = {127, 0, -128};
    o.qw.rows = n;
    o.qw.cols = k;
    o.qw.codes.resize(static_cast<std::size_t>(n * k));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c) o.qw.codes[j * k + c] = int8_t(j % 2 == 0 ? -128 : 127 - (c + j) % 3);
    o.qw.scales.assign(static_cast<std::size_t>(n), 1e-4f);
    compute_reference(d, o);
    Gemm g(d, Device::cuda(0), GemmOptions{kFamily});
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    Call c(d, g.pack(o.qw), o, g.workspace_size());
    StreamHolder s;
    c.out.poison(s.get());
    ASSERT_TRUE(g.run(c.args, c.workspace.get(), s.get()).ok());
    s.sync();
    expect_close(d, c.out.download(), o.ref, d.describe() + " (largest sums), " + g.kernel_name());
  }
}

// The same problem on the CPU backend (dequantize, fp64 GEMM): the conventions agree.
TEST(sm90_int8_gemm, agrees_with_cpu_backend) {
  LOWBIT_REQUIRE_HOPPER();
  for (bool zp : {false, true}) {
    const GemmDesc d = desc_of(37, 320, 1024, zp, DType::kF16, true);
    const Operands o = make_operands(d, seed_of(d.m, d.n, d.k, zp));  // run_case's operands
    Gemm cpu(d, Device::cpu());
    const PackedWeight cw = cpu.pack(o.qw);
    std::vector<uint8_t> cpu_out(static_cast<std::size_t>(d.m * d.n) * 2);
    std::vector<uint8_t> workspace(cpu.workspace_size());
    const std::vector<float> as = o.qa.scales;
    const std::vector<uint8_t> bias = encode(o.bias, d.out_dtype);
    GemmArgs args;
    args.a = o.qa.codes.data();
    args.a_scales = as.data();
    args.a_zeros = zp ? o.qa.zeros.data() : nullptr;
    args.w = cw.host_view();
    args.bias = bias.data();
    args.out = cpu_out.data();
    ASSERT_TRUE(cpu.run(args, workspace.data(), nullptr).ok());
    const std::vector<float> cpu_ref = decode(cpu_out, d.out_dtype, d.m * d.n);
    const std::vector<uint8_t> gpu = run_case(37, 320, 1024, zp, DType::kF16, true);
    expect_close(d, gpu, cpu_ref, "against the CPU backend, " + d.describe());
  }
}

TEST(sm90_int8_gemm, execution_properties) {
  LOWBIT_REQUIRE_HOPPER();
  struct Problem {
    GemmDesc d;
    std::unique_ptr<Gemm> g;
    Operands o;
    std::unique_ptr<Call> c;
  };
  auto make = [](int64_t m, int64_t n, int64_t k, bool zp, uint32_t seed) {
    auto p = std::make_unique<Problem>();
    p->d = desc_of(m, n, k, zp, DType::kBF16, true);
    p->g = std::make_unique<Gemm>(p->d, Device::cuda(0), GemmOptions{kFamily});
    p->o = make_operands(p->d, seed);
    p->c = std::make_unique<Call>(p->d, p->g->pack(p->o.qw), p->o, p->g->workspace_size());
    return p;
  };
  // m = 16 with long k: a split plan (workspace + reduce); m = 300: two consumer warpgroups.
  auto p0 = make(16, 1024, 14336, true, 1), p1 = make(300, 512, 1024, false, 2), p2 = make(1, 256, 4096, true, 3);
  auto prepared = [](Problem& p) {
    PreparedCall c;
    c.enqueue = [&p](cudaStream_t s) { return p.g->run(p.c->args, p.c->workspace.get(), s); };
    c.run = [&p](cudaStream_t s) {
      p.c->out.poison(s);
      const Status st = p.g->run(p.c->args, p.c->workspace.get(), s);
      EXPECT_TRUE(st.ok()) << st.message();
      LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s));
      return p.c->out.download();
    };
    c.out = &p.c->out;
    c.what = p.d.describe() + ", kernel " + p.g->kernel_name();
    return c;
  };
  const PreparedCall c0 = prepared(*p0), c1 = prepared(*p1), c2 = prepared(*p2);
  std::printf("sm90_int8_gemm plans: %s | %s | %s\n", c0.what.c_str(), c1.what.c_str(), c2.what.c_str());
  expect_bitwise_repeatable(c0);
  expect_graph_replays_match(c0);
  expect_graph_replays_match(c1);
  expect_two_streams_match(c0, c1, c2);
}

// The selection rule of select.cpp on sm_90 (docs/kernels/int8_gemm.md, "Selection"): the
// mma.sync family at m <= 8 (except many channels from m = 3) and for long k up to m = 16.
TEST(sm90_int8_gemm, chosen_by_default) {
  LOWBIT_REQUIRE_HOPPER();
  struct Case {
    int64_t m, n, k;
    const char* family;
  };
  const Case cases[] = {{1, 6144, 4096, "sm80_int8_gemm"},  {8, 4096, 4096, "sm80_int8_gemm"},
                        {2, 28672, 4096, "sm80_int8_gemm"}, {3, 28672, 4096, "sm90_int8_gemm"},
                        {9, 6144, 4096, "sm90_int8_gemm"},  {16, 4096, 14336, "sm80_int8_gemm"},
                        {17, 4096, 14336, "sm90_int8_gemm"}, {64, 4096, 4096, "sm90_int8_gemm"}};
  for (const Case& c : cases) {
    Gemm g(desc_of(c.m, c.n, c.k, false, DType::kF16, false), Device::cuda(0));
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    EXPECT_EQ(g.kernel_name().rfind(c.family, 0), 0u) << "m=" << c.m << " n=" << c.n << " k=" << c.k << ": "
                                                     << g.kernel_name();
  }
}

TEST(sm90_int8_gemm, refuses_what_it_cannot_run) {
  LOWBIT_REQUIRE_HOPPER();
  auto reason = [](const GemmDesc& d) { return Gemm(d, Device::cuda(0), GemmOptions{kFamily}).can_implement().message(); };
  EXPECT_NE(reason(desc_of(4, 256, 40, false, DType::kF16, false)).find("k to be a multiple of 16"), std::string::npos);
  EXPECT_NE(reason(desc_of(4, 200, 64, false, DType::kF16, false)).find("n to be a multiple of 16"), std::string::npos);
  EXPECT_NE(reason(desc_of(4, 256, 64, false, DType::kF32, false)).find("f16 or bf16 output"), std::string::npos);
  EXPECT_NE(reason(desc_of(4, 256, cuda::kInt8GemmMaxK + 16, false, DType::kF16, false)).find("exact int32 sums"),
            std::string::npos);
  GemmDesc fp8 = desc_of(4, 256, 64, false, DType::kF16, false);
  fp8.w = WeightFormat::fp8_format(Fp8Format{DType::kE4M3, Fp8Scaling::kPerRow});
  fp8.a.dtype = DType::kE4M3;
  EXPECT_NE(reason(fp8).find("int8 (W8A8) weights only"), std::string::npos);

  // Run-time argument errors: misaligned activations, zero points without row sums.
  const GemmDesc d = desc_of(4, 256, 64, true, DType::kF16, false);
  Gemm g(d, Device::cuda(0), GemmOptions{kFamily});
  const Operands o = make_operands(d, 5);
  Call c(d, g.pack(o.qw), o, g.workspace_size());
  StreamHolder s;
  GemmArgs bad = c.args;
  bad.a = static_cast<const int8_t*>(c.args.a) + 8;
  Status st = g.run(bad, c.workspace.get(), s.get());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("A (activations) must be 16-byte aligned"), std::string::npos) << st.message();
  bad = c.args;
  bad.w.zeros = nullptr;
  st = g.run(bad, c.workspace.get(), s.get());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("row sums"), std::string::npos) << st.message();
  // A weight with zero points cannot be packed.
  Int8Tensor asym = o.qw;
  asym.zeros.assign(static_cast<std::size_t>(asym.rows), 0);
  EXPECT_THROW((void)g.pack(asym), Error);
}

}  // namespace
}  // namespace lowbit::test
