// Tests of the sm80 int8 GEMM family (src/cuda/int8_gemm/sm80_int8_gemm_*, the sm89 fp8 GEMM
// kernel template over int8): symmetric and zero-point activations x f16 / bf16 output x bias
// over an m / n / k sweep, long k, every tile configuration with every split mode, extreme
// codes at the largest k (no int32 overflow, int64 zero-point term), poisoned outputs and
// workspaces, determinism, CUDA-graph capture, PDL on / off, the refusals of
// can_implement() and run().
//
// The oracle is computed here, independent of the library: exact int64 sums of the int8
// codes, then double math for the zero point, the scales and the bias:
//   ref[m, n] = double(sum_k A[m, k] W[n, k] - za[m] * sum_k W[n, k]) * sa[m] * sw[n] + bias[n].
// Everything goes through the public entry points (lowbit::Gemm restricted to the family, or
// the family's make_with_plan for forced plans), so a swapped orientation (the kernel computes
// out^T with the weights as the mma A operand) shows as a wrong answer.
//
// Test names: cases whose GPU or reference work is large carry "Large" (filter them out under
// compute-sanitizer: --gtest_filter='sm80_int8_gemm.*:-*Large*'). LOWBIT_TEST_SMALL=1 shrinks
// the sweeps further.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm89_fp8_gemm_heuristic.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"
#include "cuda/int8_gemm/sm80_int8_gemm_family.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/quantize.hpp"
#include "test_gpu_common.hpp"

namespace {

using namespace lowbit;
using namespace lowbit::test;
using cuda::Sm80Int8Plan;
using cuda::Sm89Fp8SplitMode;

uint32_t g_seed = 80800;

// Skips (with the family's reason) on GPUs the family does not run on; that reason must name
// the requirement.
#define LOWBIT_REQUIRE_SM80_INT8()                                                                   \
  do {                                                                                               \
    LOWBIT_REQUIRE_GPU();                                                                            \
    const ::lowbit::Status s_ = ::lowbit::cuda::sm80_int8_gemm_runs_on(::lowbit::cuda::gpu_spec(0)); \
    if (!s_.ok()) {                                                                                  \
      EXPECT_NE(s_.message().find("sm_"), std::string::npos) << s_.message();                       \
      GTEST_SKIP() << s_.message();                                                                  \
    }                                                                                                \
  } while (0)

bool has_cluster_split() {
  const cuda::GpuSpec& g = cuda::gpu_spec(0);
  return g.cc >= 90 && cuda::build_has_code_for(g.cc, 90);
}

Sm80Int8Plan plan_of(int config, int splits, bool workspace) {
  Sm80Int8Plan p;
  p.config = config;
  p.splits = splits;
  p.split_mode = splits == 1 ? Sm89Fp8SplitMode::kNone
                 : workspace ? Sm89Fp8SplitMode::kWorkspace
                             : Sm89Fp8SplitMode::kCluster;
  return p;
}

// Extreme operands: every activation code -128 (with zero point 127 when zp: x - z = -255)
// against every weight code `w_code`.
struct Extreme {
  int8_t w_code = 127;
};

// ------------------------------------------------------------------------------ cases

struct Case {
  int64_t m = 1, n = 64, k = 128;
  bool zp = false;  // activations with a per-token zero point
  DType out = DType::kF16;
  bool bias = false;
  std::optional<Sm80Int8Plan> plan;  // none: the public API with GemmOptions::family
  std::optional<Extreme> extreme;    // none: quantized random normals
  std::string text() const {
    std::ostringstream s;
    s << "m=" << m << " n=" << n << " k=" << k << (zp ? " zero-point" : " symmetric") << " out=" << dtype_name(out)
      << (bias ? " +bias" : "");
    if (extreme) s << " extreme(a=-128, w=" << int{extreme->w_code} << ")";
    if (plan) s << " plan=" << plan->describe();
    return s.str();
  }
};

GemmDesc desc_of(const Case& c) {
  GemmDesc d;
  d.m = c.m;
  d.n = c.n;
  d.k = c.k;
  d.a.dtype = DType::kI8;
  d.a.int8_zero_point = c.zp;
  d.w = WeightFormat::int8();
  d.out_dtype = c.out;
  d.has_bias = c.bias;
  return d;
}

// Relative Frobenius error allowed, per output dtype: the output rounding (f16 ~2^-11, bf16
// ~2^-8 relative) plus margin; the kernel's own error (one fp32 rounding of an exact integer,
// two fp32 products, the fp32 sum of the split partials) is ~1e-7.
double tolerance(DType out) { return out == DType::kBF16 ? 8e-3 : 1e-3; }

struct Operands {
  Int8Tensor qa, qw;
  std::vector<float> bias;  // (n), values of the output dtype
  std::vector<double> ref;  // (m, n)
};

// Activation rows whose magnitude changes by row (per-token scales differ) and, with a zero
// point, whose range is off-centre (zero points far from 0: all-positive rows give -128).
std::vector<float> activations(std::mt19937& rng, int64_t m, int64_t k, bool zp) {
  std::vector<float> v = random_normal(rng, m * k);
  for (int64_t r = 0; r < m; ++r) {
    const float mag = std::ldexp(1.0f, static_cast<int>(r % 7) - 3);
    for (int64_t c = 0; c < k; ++c) {
      float& x = v[static_cast<size_t>(r * k + c)];
      if (zp) {
        switch (r % 4) {
          case 0: x = std::fabs(x); break;  // relu-like: lo = 0
          case 1: x += 2.0f; break;
          case 3: x -= 1.0f; break;
          default: break;
        }
      }
      x *= mag;
    }
  }
  return v;
}

// The oracle (file comment): exact integer sums, then double math.
std::vector<double> reference(const Case& c, const Operands& o) {
  const int64_t m = c.m, n = c.n, k = c.k;
  std::vector<int64_t> wsum(static_cast<size_t>(n), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t s = 0;
    const int8_t* w = o.qw.codes.data() + j * k;
    for (int64_t t = 0; t < k; ++t) s += w[t];
    wsum[static_cast<size_t>(j)] = s;
  }
  std::vector<double> ref(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* a = o.qa.codes.data() + i * k;
    const int64_t za = c.zp ? o.qa.zeros[static_cast<size_t>(i)] : 0;
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* w = o.qw.codes.data() + j * k;
      int64_t acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += static_cast<int32_t>(a[t]) * static_cast<int32_t>(w[t]);
      const int64_t x = acc - za * wsum[static_cast<size_t>(j)];
      double r = static_cast<double>(x) * static_cast<double>(o.qa.scales[static_cast<size_t>(i)]) *
                 static_cast<double>(o.qw.scales[static_cast<size_t>(j)]);
      if (c.bias) r += o.bias[static_cast<size_t>(j)];
      ref[static_cast<size_t>(i * n + j)] = r;
    }
  }
  return ref;
}

Operands make_operands(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Operands o;
  if (c.extreme) {
    o.qa.rows = c.m;
    o.qa.cols = c.k;
    o.qa.codes.assign(static_cast<size_t>(c.m * c.k), int8_t{-128});
    for (int64_t r = 0; r < c.m; ++r) o.qa.scales.push_back(std::ldexp(1.0f, -16 - static_cast<int>(r % 3)));
    if (c.zp) o.qa.zeros.assign(static_cast<size_t>(c.m), 127);
    o.qw.rows = c.n;
    o.qw.cols = c.k;
    o.qw.codes.assign(static_cast<size_t>(c.n * c.k), c.extreme->w_code);
    for (int64_t r = 0; r < c.n; ++r) o.qw.scales.push_back(std::ldexp(1.0f, -16 - static_cast<int>(r % 5)));
  } else {
    const std::vector<float> a = activations(rng, c.m, c.k, c.zp);
    std::vector<float> w = random_normal(rng, c.n * c.k);
    for (int64_t r = 0; r < c.n; ++r)
      for (int64_t t = 0; t < c.k; ++t)
        w[static_cast<size_t>(r * c.k + t)] *= 0.05f * std::ldexp(1.0f, static_cast<int>(r % 5) - 2);
    o.qa = quantize_int8(a.data(), c.m, c.k, c.zp);
    o.qw = quantize_int8(w.data(), c.n, c.k, false);
  }
  if (c.bias) o.bias = rounded(random_normal(rng, c.n, 0.5f), c.out);
  o.ref = reference(c, o);
  return o;
}

// ----------------------------------------------------------------- running on the GPU

// A kernel to run: the public API (Gemm restricted to the family) or a forced plan.
struct Kernel {
  std::unique_ptr<Gemm> gemm;
  std::unique_ptr<detail::GemmImpl> impl;
  std::string name() const { return gemm ? gemm->kernel_name() : impl->name(); }
  size_t workspace_size() const { return gemm ? gemm->workspace_size() : impl->workspace_size(); }
  PackedWeight pack(const Int8Tensor& w) const { return gemm ? gemm->pack(w) : impl->pack(w); }
  Status run(const GemmArgs& a, void* ws, cudaStream_t s) const {
    return gemm ? gemm->run(a, ws, s) : impl->run(a, ws, s);
  }
};

Kernel make_kernel(const Case& c) {
  Kernel k;
  const GemmDesc d = desc_of(c);
  if (c.plan) {
    const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
    throw_if_error(cuda::sm80_int8_gemm_can_implement(d, gpu));
    k.impl = cuda::sm80_int8_gemm_make_with_plan(d, gpu, *c.plan);
  } else {
    k.gemm = std::make_unique<Gemm>(d, Device::cuda(0), GemmOptions{cuda::kSm80Int8GemmName});
    throw_if_error(k.gemm->can_implement());
  }
  return k;
}

// The operands on the device, with an output and a workspace.
struct Prepared {
  Case c;
  uint32_t seed;
  Operands ops;
  Kernel kernel;
  PackedWeight packed;
  DeviceBuffer a, a_scales, a_zeros, w, w_scales, w_zeros, bias, out, ws;
  explicit Prepared(const Case& cs) : c(cs), seed(++g_seed), ops(make_operands(cs, seed)), kernel(make_kernel(cs)) {
    packed = kernel.pack(ops.qw);
    a = DeviceBuffer(ops.qa.codes);
    a_scales = DeviceBuffer(ops.qa.scales);
    if (c.zp) a_zeros = DeviceBuffer(ops.qa.zeros);
    w = DeviceBuffer(packed.data);
    w_scales = DeviceBuffer(packed.scales);
    w_zeros = DeviceBuffer(packed.zeros);
    if (c.bias) bias = DeviceBuffer(encode(ops.bias, c.out));
    out = DeviceBuffer(static_cast<size_t>(c.m * c.n) * dtype_size(c.out));
    ws = DeviceBuffer(kernel.workspace_size());
  }
  GemmArgs args() const {
    GemmArgs g;
    g.a = a.get();
    g.a_scales = a_scales.get();
    g.a_zeros = c.zp ? a_zeros.get() : nullptr;
    g.w = WeightView{w.get(), w_scales.get(), w_zeros.get(), nullptr};
    g.bias = c.bias ? bias.get() : nullptr;
    g.out = out.get();
    return g;
  }
  // One run with a poisoned output and workspace (NaN: any element left unwritten, or any
  // partial sum the reduction reads without a kernel having written it, shows).
  std::vector<uint8_t> run(cudaStream_t s) {
    out.poison(s);
    ws.poison(s);
    const Status st = kernel.run(args(), ws.get(), s);
    EXPECT_TRUE(st.ok()) << st.message() << " " << c.text();
    LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s));
    return out.download();
  }
  std::string what() const { return c.text() + " kernel=" + kernel.name() + " seed=" + std::to_string(seed); }
};

double relative_frobenius(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Runs a case and checks it against the reference; returns the output bytes.
std::vector<uint8_t> check_case(const Case& c) {
  Prepared p(c);
  StreamHolder stream;
  const std::vector<uint8_t> bytes = p.run(stream.get());
  const std::vector<float> got = decode(bytes, c.out, c.m * c.n);
  const std::string what = p.what();
  EXPECT_EQ(count_non_finite(got), 0) << "non-finite (unwritten) outputs: " << what;
  EXPECT_FALSE(all_zero(got)) << "all outputs zero: " << what;
  const double err = relative_frobenius(got, p.ops.ref);
  EXPECT_LE(err, tolerance(c.out)) << "relative Frobenius error " << err << " > " << tolerance(c.out) << ": " << what;
  return bytes;
}

// ------------------------------------------------------------------------ correctness

std::vector<int64_t> m_sweep() {
  if (small_mode()) return {1, 9, 33};
  return {1, 2, 7, 8, 9, 16, 33, 64, 129, 300};
}

// Every m over n x k shapes (edges of the 16 / 64 / 128-channel tiles and of the 128 / 256 /
// 1024-column stages), symmetric / zero point, f16 / bf16 and bias cycled per case so that
// each shape sees several combinations. `big`: the shapes with n or k = 4096 (cases whose
// reference takes more than 6e8 multiply-adds are left to the other tests).
void sweep(bool big) {
  const int64_t ns[] = {16, 48, 256, 4096};
  const int64_t ks[] = {16, 48, 400, 4096};
  int i = 0;
  for (int64_t n : ns)
    for (int64_t k : ks) {
      if ((n == 4096 || k == 4096) != big) continue;
      for (int64_t m : m_sweep()) {
        ++i;
        if (m * n * k > 600'000'000) continue;
        if (small_mode() && m * n * k > 20'000'000) continue;
        Case c;
        c.m = m;
        c.n = n;
        c.k = k;
        c.zp = (i % 2) == 1;
        c.out = (i / 2) % 2 ? DType::kBF16 : DType::kF16;
        c.bias = (i / 4) % 2 == 1;
        check_case(c);
      }
    }
}

TEST(sm80_int8_gemm, sweep_m_small_shapes) {
  LOWBIT_REQUIRE_SM80_INT8();
  sweep(false);
}

TEST(sm80_int8_gemm, Large_sweep_m_n4096_k4096) {
  LOWBIT_REQUIRE_SM80_INT8();
  sweep(true);
}

// Every combination of zero point x output dtype x bias on one shape with partial tiles.
TEST(sm80_int8_gemm, every_zero_point_dtype_bias_combination) {
  LOWBIT_REQUIRE_SM80_INT8();
  for (bool zp : {false, true})
    for (DType out : {DType::kF16, DType::kBF16})
      for (bool bias : {false, true})
        for (int64_t m : {3, 70}) {
          Case c;
          c.m = m;
          c.n = 208;
          c.k = 1040;
          c.zp = zp;
          c.out = out;
          c.bias = bias;
          check_case(c);
        }
}

// Llama-3.1-8B's down projection (k = 14336) through the heuristic: long k, split-K.
TEST(sm80_int8_gemm, Large_long_k_14336) {
  LOWBIT_REQUIRE_SM80_INT8();
  if (small_mode()) GTEST_SKIP() << "long k is skipped in LOWBIT_TEST_SMALL mode";
  struct Shape {
    int64_t m, n;
  };
  int i = 0;
  for (const Shape& s : {Shape{1, 4096}, Shape{8, 4096}, Shape{16, 1024}, Shape{33, 256}, Shape{129, 256}}) {
    Case c;
    c.m = s.m;
    c.n = s.n;
    c.k = 14336;
    c.zp = (i % 2) == 0;
    c.out = (i % 3) ? DType::kF16 : DType::kBF16;
    c.bias = (i % 2) == 1;
    ++i;
    check_case(c);
  }
}

// Every configuration of the table with every split mode: the heuristic may pick any of
// them, so each must be right on its own. k = 1040: a partial last stage for every block_k,
// uneven splits; n = 144: partial 64- and 128-channel tiles. On sm_90 the cluster split and
// the workspace split of the same plan must give the same bytes (both sum the same scaled
// per-split partials in split order).
TEST(sm80_int8_gemm, every_config_and_split_mode) {
  LOWBIT_REQUIRE_SM80_INT8();
  const bool cluster = has_cluster_split();
  for (int cfg = 0; cfg < cuda::kSm89Fp8ConfigCount; ++cfg)
    for (int s : {1, 2, 4})
      for (bool zp : {false, true}) {
        Case c;
        c.m = cfg == 0 ? 5 : cfg == 1 ? 13 : cfg == 2 ? 50 : 200;
        if (small_mode()) c.m = cfg < 2 ? 5 : 33;
        c.n = 144;
        c.k = 1040;
        c.zp = zp;
        c.out = zp ? DType::kBF16 : DType::kF16;
        c.bias = s != 2;
        c.plan = plan_of(cfg, s, true);
        const uint32_t seed_before = g_seed;  // the cluster run below draws the same operands
        const std::vector<uint8_t> ws_bytes = check_case(c);
        if (s > 1 && cluster) {
          g_seed = seed_before;
          c.plan = plan_of(cfg, s, false);
          EXPECT_EQ(check_case(c), ws_bytes) << "cluster and workspace splits differ: " << c.text();
        }
      }
}

// A tile configuration used outside its m range (t8 with many token tiles, t128 with one
// token): the GROUP_M tile order, partial token tiles and token clamping.
TEST(sm80_int8_gemm, configs_outside_their_m_range) {
  LOWBIT_REQUIRE_SM80_INT8();
  for (int cfg = 0; cfg < cuda::kSm89Fp8ConfigCount; ++cfg)
    for (int64_t m : {1, 77}) {
      Case c;
      c.m = m;
      c.n = 400;
      c.k = 640;
      c.zp = m == 77;
      c.plan = plan_of(cfg, 1, false);
      check_case(c);
    }
}

// The largest k (kInt8GemmMaxK) with every code at its extreme: the int32 sums reach
// -128 * 127 * k = -2^31 + 1.7e7 (and +2^31 - 2.6e5 for -128 x -128), and with zero point
// 127 the zero-point term makes x = -255 * 127 * k (or 255 * 128 * k), beyond int32 (the
// int64 path). Every
// configuration, unsplit and split in two (the zero-point term in split 0 only).
TEST(sm80_int8_gemm, extreme_codes_at_max_k_do_not_overflow) {
  LOWBIT_REQUIRE_SM80_INT8();
  const std::vector<int> cfgs = small_mode() ? std::vector<int>{0} : std::vector<int>{0, 1, 2, 3};
  for (int cfg : cfgs)
    for (int s : {1, 2})
      for (int8_t w_code : {int8_t{127}, int8_t{-128}})
        for (bool zp : {false, true}) {
          Case c;
          c.m = 3;
          c.n = 64;
          c.k = cuda::kInt8GemmMaxK;
          c.zp = zp;
          c.out = s == 1 ? DType::kF16 : DType::kBF16;
          c.extreme = Extreme{w_code};
          c.plan = plan_of(cfg, s, true);
          check_case(c);
        }
  // And through the heuristic.
  if (small_mode()) return;
  Case c;
  c.m = 5;
  c.n = 256;
  c.k = cuda::kInt8GemmMaxK;
  c.zp = true;
  c.bias = true;
  c.extreme = Extreme{127};
  check_case(c);
}

// ---------------------------------------------------------------- execution properties

std::vector<Case> execution_cases() {
  std::vector<Case> v;
  Case c;
  c.m = 3;
  c.n = 256;
  c.k = 2048;
  c.zp = true;
  c.out = DType::kBF16;
  c.bias = true;
  c.plan = plan_of(0, 4, !has_cluster_split());  // cluster split-K on sm_90, else workspace
  v.push_back(c);
  c.zp = false;
  c.out = DType::kF16;
  c.plan = plan_of(1, 3, true);  // workspace split-K + reduction kernel
  v.push_back(c);
  c.zp = true;
  c.m = 70;
  c.plan.reset();  // the heuristic's plan through the public API
  v.push_back(c);
  return v;
}

// One prepared case as the shared execution-property checks take it (test_gpu_common.hpp).
PreparedCall call_of(Prepared& p) {
  return PreparedCall{[&p](cudaStream_t s) { return p.run(s); },
                      [&p](cudaStream_t s) { return p.kernel.run(p.args(), p.ws.get(), s); }, &p.out, p.what()};
}

TEST(sm80_int8_gemm, deterministic_bit_for_bit) {
  LOWBIT_REQUIRE_SM80_INT8();
  for (const Case& c : execution_cases()) {
    Prepared p(c);
    expect_bitwise_repeatable(call_of(p));
  }
}

TEST(sm80_int8_gemm, cuda_graph_capture) {
  LOWBIT_REQUIRE_SM80_INT8();
  for (const Case& c : execution_cases()) {
    Prepared p(c);
    expect_graph_replays_match(call_of(p));
  }
}

TEST(sm80_int8_gemm, two_streams_concurrently) {
  LOWBIT_REQUIRE_SM80_INT8();
  std::vector<Case> cases = execution_cases();
  Prepared p0(cases[0]), p1(cases[1]), p2(cases[2]);
  expect_two_streams_match(call_of(p0), call_of(p1), call_of(p2));
}

// Programmatic dependent launch (sm_90) changes when the weights are requested, never the
// result: kernels built with LOWBIT_INT8_GEMM_PDL=0 give the same bytes, also back to back
// on one stream.
TEST(sm80_int8_gemm, pdl_on_and_off_agree) {
  LOWBIT_REQUIRE_SM80_INT8();
  if (!cuda::sm80_int8_gemm_uses_pdl(cuda::gpu_spec(0))) GTEST_SKIP() << "PDL is off on this GPU / build";
  for (Case c : execution_cases()) {
    Prepared on(c);
    StreamHolder s;
    const std::vector<uint8_t> r_on = on.run(s.get());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(on.kernel.run(on.args(), on.ws.get(), s.get()).ok());
    s.sync();
    EXPECT_EQ(on.out.download(), r_on) << on.what();
    ::setenv("LOWBIT_INT8_GEMM_PDL", "0", 1);
    on.kernel = make_kernel(c);  // read at construction
    ::unsetenv("LOWBIT_INT8_GEMM_PDL");
    EXPECT_EQ(on.run(s.get()), r_on) << "PDL off: " << on.what();
  }
}

// ------------------------------------------------------------------------- public API

TEST(sm80_int8_gemm, public_api_selects_the_family) {
  LOWBIT_REQUIRE_SM80_INT8();
  for (bool zp : {false, true}) {
    Case c;
    c.m = 7;
    c.n = 256;
    c.k = 1024;
    c.zp = zp;
    c.bias = true;
    Gemm g(desc_of(c), Device::cuda(0), GemmOptions{"sm80_int8_gemm"});
    ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
    EXPECT_EQ(g.kernel_name().rfind("sm80_int8_gemm_", 0), 0u) << g.kernel_name();
    EXPECT_EQ(g.weight_layout(), "int8_nk");
    check_case(c);
  }
}

// Misaligned or missing buffers are refused by run(), not faulted on.
TEST(sm80_int8_gemm, run_refuses_misaligned_buffers) {
  LOWBIT_REQUIRE_SM80_INT8();
  Case c;
  c.m = 4;
  c.n = 128;
  c.k = 256;
  c.zp = true;
  c.bias = true;
  Prepared p(c);
  auto refused = [&](const GemmArgs& a, const char* what) {
    const Status s = p.kernel.run(a, p.ws.get(), nullptr);
    EXPECT_FALSE(s.ok()) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  };
  auto shifted = [](const void* ptr, int bytes) {
    return static_cast<const void*>(static_cast<const char*>(ptr) + bytes);
  };
  GemmArgs a = p.args();
  a.a = shifted(a.a, 8);
  refused(a, "A (activations) must be 16-byte aligned");
  a = p.args();
  a.w.data = shifted(a.w.data, 4);
  refused(a, "weight data must be 16-byte aligned");
  a = p.args();
  a.out = const_cast<void*>(shifted(a.out, 8));
  refused(a, "out must be 16-byte aligned");
  a = p.args();
  a.a_scales = shifted(a.a_scales, 2);
  refused(a, "A scales must be 4-byte aligned");
  a = p.args();
  a.w.scales = shifted(a.w.scales, 2);
  refused(a, "weight scales must be 4-byte aligned");
  a = p.args();
  a.a_zeros = shifted(a.a_zeros, 2);
  refused(a, "A zero points must be 4-byte aligned");
  a = p.args();
  a.w.zeros = shifted(a.w.zeros, 2);
  refused(a, "weight zeros (row sums) must be 4-byte aligned");
  a = p.args();
  a.bias = shifted(a.bias, 2);
  refused(a, "bias must be 4-byte aligned");
  a = p.args();
  a.w.zeros = nullptr;
  refused(a, "row sums");
  // Through the public API: a missing zero-point buffer is named.
  Gemm g(desc_of(c), Device::cuda(0), GemmOptions{"sm80_int8_gemm"});
  a = p.args();
  a.a_zeros = nullptr;
  const Status s = g.run(a, p.ws.get(), nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("A zero points"), std::string::npos) << s.message();
}

TEST(sm80_int8_gemm, can_implement_refusals_name_the_reason) {
  // Host-only checks: no GPU needed (a GpuSpec is plain data).
  cuda::GpuSpec gpu;
  gpu.name = "test GPU";
  gpu.cc = 80;
  gpu.sm_count = 108;
  auto reason = [&](const GemmDesc& d) { return cuda::sm80_int8_gemm_can_implement(d, gpu).message(); };
  Case c;
  c.m = 1;
  c.n = 4096;
  c.k = 4096;
  c.zp = true;
  const GemmDesc d = desc_of(c);
  EXPECT_TRUE(cuda::sm80_int8_gemm_can_implement(d, gpu).ok()) << reason(d);
  GemmDesc e = d;
  e.k = 4104;
  EXPECT_NE(reason(e).find("k to be a multiple of 16"), std::string::npos) << reason(e);
  e = d;
  e.n = 4104;
  EXPECT_NE(reason(e).find("n to be a multiple of 16"), std::string::npos) << reason(e);
  e = d;
  e.out_dtype = DType::kF32;
  EXPECT_NE(reason(e).find("f16 or bf16"), std::string::npos) << reason(e);
  e = d;
  e.w = WeightFormat::fp8_format(Fp8Format{DType::kE4M3, Fp8Scaling::kPerRow});
  EXPECT_NE(reason(e).find("int8 (W8A8) weights only"), std::string::npos) << reason(e);
  e = d;
  e.a.dtype = DType::kE4M3;
  EXPECT_NE(reason(e).find("int8 activations"), std::string::npos) << reason(e);
  e = d;
  e.k = cuda::kInt8GemmMaxK;
  EXPECT_TRUE(cuda::sm80_int8_gemm_can_implement(e, gpu).ok()) << reason(e);
  e.k = cuda::kInt8GemmMaxK + 16;
  EXPECT_NE(reason(e).find("k <= " + std::to_string(cuda::kInt8GemmMaxK)), std::string::npos) << reason(e);
  e = d;
  e.m = (int64_t{1} << 24) + 1;
  EXPECT_NE(reason(e).find("m <= 2^24"), std::string::npos) << reason(e);
  EXPECT_EQ(reason(e).rfind("lowbit: sm80_int8_gemm: ", 0), 0u) << reason(e);

  // runs_on: a Turing GPU is refused with the requirement named.
  cuda::GpuSpec t4 = gpu;
  t4.name = "T4";
  t4.cc = 75;
  const Status r = cuda::sm80_int8_gemm_runs_on(t4);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message().find("compute capability 8.0"), std::string::npos) << r.message();
}

TEST(sm80_int8_gemm, public_api_refusal_names_the_family) {
  LOWBIT_REQUIRE_GPU();
  Case c;
  c.m = 8;
  c.n = 256;
  c.k = 200;  // not a multiple of 16
  Gemm g(desc_of(c), Device::cuda(0), GemmOptions{"sm80_int8_gemm"});
  ASSERT_FALSE(g.can_implement().ok());
  EXPECT_NE(g.can_implement().message().find("sm80_int8_gemm:"), std::string::npos) << g.can_implement().message();
}

TEST(sm80_int8_gemm, make_with_plan_refuses_bad_plans) {
  LOWBIT_REQUIRE_SM80_INT8();
  Case c;
  c.m = 8;
  c.n = 256;
  c.k = 256;
  const GemmDesc d = desc_of(c);
  const cuda::GpuSpec& gpu = cuda::gpu_spec(0);
  Sm80Int8Plan bad = plan_of(cuda::kSm89Fp8ConfigCount, 1, false);
  EXPECT_THROW(cuda::sm80_int8_gemm_make_with_plan(d, gpu, bad), Error);
  bad = plan_of(0, cuda::kSm89Fp8MaxSplits + 1, true);
  EXPECT_THROW(cuda::sm80_int8_gemm_make_with_plan(d, gpu, bad), Error);
  bad = plan_of(0, 2, true);
  bad.split_mode = Sm89Fp8SplitMode::kNone;
  EXPECT_THROW(cuda::sm80_int8_gemm_make_with_plan(d, gpu, bad), Error);
  if (!has_cluster_split()) {
    bad = plan_of(0, 2, false);
    EXPECT_THROW(cuda::sm80_int8_gemm_make_with_plan(d, gpu, bad), Error);
  }
}

}  // namespace
