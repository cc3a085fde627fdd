// The cuBLAS baseline family through the public lowbit::Gemm API, against the CPU reference
// (dequantize, then an fp64-accumulated GEMM) on the same operands.
//
// Every case: fresh random data, output poisoned (NaN) before the run, then checked finite
// (every element written), not all zero, and within the tolerance of its format. Failure
// messages carry the problem (m, n, k, formats), the kernel and the weight layout.
#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/quantize.hpp"
#include "lowbit/reference.hpp"
#include "test_gpu_common.hpp"

namespace lowbit::test {
namespace {

// Relative Frobenius error allowed per dtype; a case takes the largest of its activation
// and output dtypes. The output rounding dominates: bf16 keeps 8 significant bits (an RMS
// relative rounding error near 2e-3), f16 keeps 11.
double tolerance_of(DType t) {
  switch (t) {
    case DType::kF16:
      return 1e-3;
    case DType::kBF16:
      return 8e-3;
    case DType::kE4M3:
    case DType::kE5M2:
      return 2e-3;
    case DType::kF32:
      return 1e-5;
    default:
      return 0.0;
  }
}
double tolerance(DType act, DType out) { return std::max(tolerance_of(act), tolerance_of(out)); }

const std::vector<int64_t> kAllM = {1, 2, 3, 15, 17, 63, 65, 256};
struct NK {
  int64_t n, k;
};
const std::vector<NK> kShapes = {{256, 512}, {4096, 4096}};

int current_cc() {
  const std::vector<GpuInfo> gpus = list_gpus();
  return gpus.empty() ? 0 : gpus[0].cc();
}

// Runs `g` on device copies of the operands and returns the output as fp32.
struct DeviceRun {
  std::vector<float> out;
};

DeviceRun run_on_device(const Gemm& g, const std::vector<uint8_t>& a,
                        const std::vector<uint8_t>& a_scales, const PackedWeight& w,
                        const std::vector<uint8_t>& bias) {
  const GemmDesc& d = g.desc();
  DeviceBuffer d_a(a), d_as(a_scales), d_w(w.data), d_ws(w.scales), d_bias(bias);
  DeviceBuffer d_out(static_cast<std::size_t>(d.m * d.n) * dtype_size(d.out_dtype));
  DeviceBuffer workspace(g.workspace_size());
  StreamHolder stream;
  d_out.poison(stream.get());

  GemmArgs args;
  args.a = d_a.get();
  args.a_scales = a_scales.empty() ? nullptr : d_as.get();
  args.w = WeightView{d_w.get(), w.scales.empty() ? nullptr : d_ws.get(), nullptr, nullptr};
  args.bias = bias.empty() ? nullptr : d_bias.get();
  args.out = d_out.get();
  const Status s = g.run(args, workspace.get(), stream.get());
  EXPECT_TRUE(s.ok()) << s.message();
  stream.sync();
  return DeviceRun{decode(d_out.download(), d.out_dtype, d.m * d.n)};
}

// The checks every case ends with.
void expect_matches(const GemmDesc& d, const Gemm& g, const std::vector<float>& out,
                    const std::vector<float>& ref) {
  std::ostringstream what;
  what << d.describe() << ", kernel " << g.kernel_name() << ", layout " << g.weight_layout();
  ASSERT_EQ(out.size(), ref.size()) << what.str();
  EXPECT_EQ(count_non_finite(out), 0) << "outputs not written or not finite: " << what.str();
  EXPECT_FALSE(all_zero(out)) << what.str();
  const double err = relative_error(out.data(), ref.data(), static_cast<int64_t>(out.size()));
  const double tol = tolerance(d.a.dtype, d.out_dtype);
  EXPECT_LE(err, tol) << "relative Frobenius error " << err << " > " << tol << ": " << what.str();
}

// ------------------------------------------------------------------------------- dense
void run_dense(DType t, DType out_dtype, bool bias, const std::vector<int64_t>& ms,
               const std::vector<NK>& shapes) {
  std::mt19937 rng(1234);
  for (const NK& s : shapes) {
    for (int64_t m : ms) {
      GemmDesc d;
      d.m = m;
      d.n = s.n;
      d.k = s.k;
      d.a.dtype = t;
      d.w = WeightFormat::dense(t);
      d.out_dtype = out_dtype;
      d.has_bias = bias;
      SCOPED_TRACE(d.describe());
      Gemm g(d, Device::cuda(0));
      ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
      EXPECT_EQ(g.kernel_name(), "cublas_baseline");
      EXPECT_EQ(g.weight_layout(), "dense_nk");

      const std::vector<float> a = rounded(random_normal(rng, m * s.k), t);
      const std::vector<float> w = rounded(random_normal(rng, s.n * s.k), t);
      const std::vector<float> b =
          bias ? rounded(random_normal(rng, s.n), out_dtype) : std::vector<float>();
      const std::vector<uint8_t> w_bytes = encode(w, t);
      const PackedWeight pw = g.pack_dense(w_bytes.data());
      const DeviceRun r = run_on_device(g, encode(a, t), {}, pw,
                                        bias ? encode(b, out_dtype) : std::vector<uint8_t>());

      std::vector<float> ref(static_cast<std::size_t>(m * s.n));
      gemm_nt_reference(a.data(), w.data(), bias ? b.data() : nullptr, m, s.n, s.k, ref.data());
      expect_matches(d, g, r.out, ref);
    }
  }
}

TEST(cublas_baseline, dense_f16) {
  LOWBIT_REQUIRE_GPU();
  run_dense(DType::kF16, DType::kF16, false, kAllM, kShapes);
}

TEST(cublas_baseline, dense_f16_bias_f32out) {
  LOWBIT_REQUIRE_GPU();
  run_dense(DType::kF16, DType::kF16, true, {1, 17, 65}, {{256, 512}});
  run_dense(DType::kF16, DType::kF32, true, {1, 17, 65}, {{256, 512}});
}

TEST(cublas_baseline, dense_bf16) {
  LOWBIT_REQUIRE_GPU();
  if (current_cc() < 80) GTEST_SKIP() << "bf16 needs sm_80+";
  run_dense(DType::kBF16, DType::kBF16, false, kAllM, kShapes);
  run_dense(DType::kBF16, DType::kBF16, true, {3, 64}, {{256, 512}});
}

TEST(cublas_baseline, dense_f32) {
  LOWBIT_REQUIRE_GPU();
  run_dense(DType::kF32, DType::kF32, false, {1, 17, 65}, {{256, 512}});
}

TEST(cublas_baseline, dense_refuses_mixed_output) {
  LOWBIT_REQUIRE_GPU();
  GemmDesc d;
  d.m = 4;
  d.n = 256;
  d.k = 512;
  d.a.dtype = DType::kF16;
  d.w = WeightFormat::dense(DType::kF16);
  d.out_dtype = DType::kBF16;
  Gemm g(d, Device::cuda(0));
  ASSERT_FALSE(g.can_implement().ok());
  EXPECT_NE(g.can_implement().message().find("cublas_baseline"), std::string::npos)
      << g.can_implement().message();
}

// GemmOptions::family pins the choice: the named family runs what it can, says why it cannot
// run the rest, and an unknown name is an error that lists the build's families.
TEST(cublas_baseline, family_option_pins_the_choice) {
  LOWBIT_REQUIRE_GPU();
  GemmDesc d;
  d.m = 4;
  d.n = 256;
  d.k = 512;
  d.a.dtype = DType::kF16;
  d.w = WeightFormat::dense(DType::kF16);
  Gemm pinned(d, Device::cuda(0), GemmOptions{"cublas_baseline"});
  ASSERT_TRUE(pinned.can_implement().ok()) << pinned.can_implement().message();
  EXPECT_EQ(pinned.kernel_name(), "cublas_baseline");

  GemmDesc q = d;  // integer weights: not a cuBLAS problem
  q.w = WeightFormat::integer(*IntWeightFormat::parse("w4g128"));
  Gemm refused(q, Device::cuda(0), GemmOptions{"cublas_baseline"});
  ASSERT_FALSE(refused.can_implement().ok());
  EXPECT_NE(refused.can_implement().message().find("cublas_baseline:"), std::string::npos)
      << refused.can_implement().message();

  Gemm unknown(d, Device::cuda(0), GemmOptions{"no_such_family"});
  ASSERT_FALSE(unknown.can_implement().ok());
  EXPECT_NE(unknown.can_implement().message().find("unknown kernel family 'no_such_family'"),
            std::string::npos)
      << unknown.can_implement().message();
  EXPECT_NE(unknown.can_implement().message().find("cublas_baseline"), std::string::npos);
}

// ------------------------------------------------------------------------------- fp8
struct Fp8Case {
  DType a_dtype = DType::kE4M3;
  Fp8Scaling a_scaling = Fp8Scaling::kPerTensor;
  DType w_dtype = DType::kE4M3;
  Fp8Scaling w_scaling = Fp8Scaling::kPerTensor;
  DType out = DType::kBF16;
  bool bias = false;
};

GemmDesc fp8_desc(const Fp8Case& c, int64_t m, int64_t n, int64_t k) {
  GemmDesc d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.a.dtype = c.a_dtype;
  d.a.fp8_scaling = c.a_scaling;
  d.w = WeightFormat::fp8_format(Fp8Format{c.w_dtype, c.w_scaling});
  d.out_dtype = c.out;
  d.has_bias = c.bias;
  return d;
}

// Rows of different magnitudes, so that per-row and per-block scales differ.
std::vector<float> graded(std::mt19937& rng, int64_t rows, int64_t cols) {
  std::vector<float> v = random_normal(rng, rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      v[static_cast<std::size_t>(r * cols + c)] *= std::ldexp(1.0f, static_cast<int>(r % 7) - 3);
  return v;
}

void run_fp8(const Fp8Case& c, const std::vector<int64_t>& ms, const std::vector<NK>& shapes) {
  std::mt19937 rng(4321);
  for (const NK& s : shapes) {
    // One weight per shape (quantizing 4096 x 4096 is the slow part), fresh A per m.
    const std::vector<float> w_f = graded(rng, s.n, s.k);
    const Fp8Tensor qw = quantize_fp8(w_f.data(), s.n, s.k, Fp8Format{c.w_dtype, c.w_scaling});
    const std::vector<float> w_ref = dequantize(qw);
    for (int64_t m : ms) {
      const GemmDesc d = fp8_desc(c, m, s.n, s.k);
      SCOPED_TRACE(d.describe());
      // Pinned: lowbit's own fp8 families come first in the selector's order.
      Gemm g(d, Device::cuda(0), GemmOptions{"cublas_baseline"});
      ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
      EXPECT_EQ(g.kernel_name(), "cublas_baseline");

      const std::vector<float> a_f = graded(rng, m, s.k);
      const Fp8Tensor qa = quantize_fp8(a_f.data(), m, s.k, Fp8Format{c.a_dtype, c.a_scaling});
      const std::vector<float> a_ref = dequantize(qa);
      const std::vector<float> b =
          c.bias ? rounded(random_normal(rng, s.n), c.out) : std::vector<float>();
      const PackedWeight pw = g.pack(qw);
      const DeviceRun r = run_on_device(g, qa.codes, bytes_of(gemm_a_scales(qa)), pw,
                                        c.bias ? encode(b, c.out) : std::vector<uint8_t>());

      std::vector<float> ref(static_cast<std::size_t>(m * s.n));
      gemm_nt_reference(a_ref.data(), w_ref.data(), c.bias ? b.data() : nullptr, m, s.n, s.k,
                        ref.data());
      expect_matches(d, g, r.out, ref);
    }
  }
}

// Skips (with the family's reason) when this GPU cannot run the mode; the reason must name
// the requirement.
#define LOWBIT_REQUIRE_FP8_MODE(min_cc, exact)                                              \
  do {                                                                                      \
    const int cc_ = current_cc();                                                           \
    if (cc_ < (min_cc) || ((exact) && cc_ != (min_cc))) {                                   \
      Gemm g_(fp8_desc(c, 256, 256, 512), Device::cuda(0), GemmOptions{"cublas_baseline"}); \
      EXPECT_FALSE(g_.can_implement().ok());                                                \
      EXPECT_NE(g_.can_implement().message().find("compute capability"), std::string::npos) \
          << g_.can_implement().message();                                                  \
      GTEST_SKIP() << g_.can_implement().message();                                         \
    }                                                                                       \
  } while (0)

TEST(cublas_baseline, fp8_tensor_e4m3) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  LOWBIT_REQUIRE_FP8_MODE(89, false);
  c.out = DType::kF16;
  run_fp8(c, kAllM, kShapes);
  c.out = DType::kBF16;
  run_fp8(c, kAllM, {{256, 512}});
  c.out = DType::kF32;
  run_fp8(c, {1, 17}, {{256, 512}});
}

TEST(cublas_baseline, fp8_tensor_bias) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.bias = true;
  LOWBIT_REQUIRE_FP8_MODE(89, false);
  c.out = DType::kBF16;
  run_fp8(c, {1, 17, 64}, {{256, 512}});
  c.out = DType::kF16;
  run_fp8(c, {1, 17, 64}, {{256, 512}});
}

TEST(cublas_baseline, fp8_tensor_mixed_e5m2) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_dtype = DType::kE5M2;  // activations e5m2, weights e4m3
  c.out = DType::kF16;
  LOWBIT_REQUIRE_FP8_MODE(89, false);
  run_fp8(c, {1, 17, 65}, {{256, 512}});
}

TEST(cublas_baseline, fp8_row) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_scaling = Fp8Scaling::kPerRow;
  c.w_scaling = Fp8Scaling::kPerRow;
  c.out = DType::kBF16;
  LOWBIT_REQUIRE_FP8_MODE(90, true);
  run_fp8(c, kAllM, {{256, 512}});
  run_fp8(c, {1, 17, 256}, {{4096, 4096}});
  c.w_scaling = Fp8Scaling::kPerTensor;  // broadcast by pack() ("fp8_nk_rowvec")
  run_fp8(c, {1, 65}, {{256, 512}});
}

// The docs list f16 and f32 outputs for outer-vector scaling too (torch._scaled_mm only
// uses bf16): kept apart so that a refusal here does not hide the bf16 results.
TEST(cublas_baseline, fp8_row_f16_f32_out) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_scaling = Fp8Scaling::kPerRow;
  c.w_scaling = Fp8Scaling::kPerRow;
  LOWBIT_REQUIRE_FP8_MODE(90, true);
  c.out = DType::kF16;
  run_fp8(c, {1, 17, 64}, {{256, 512}});
  c.out = DType::kF32;
  run_fp8(c, {1, 17, 64}, {{256, 512}});
}

TEST(cublas_baseline, fp8_block_1x128_128x128) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_scaling = Fp8Scaling::kBlock1x128;
  c.w_scaling = Fp8Scaling::kBlock128x128;
  c.out = DType::kBF16;
  LOWBIT_REQUIRE_FP8_MODE(90, true);
  const std::vector<int64_t> ms = {4, 16, 64, 256};  // cuBLASLt: m a multiple of 4
  run_fp8(c, ms, {{256, 512}, {4096, 4096}});
}

// One k block (the activation scales need no transpose), and partial blocks along n and k.
TEST(cublas_baseline, fp8_block_edges) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_scaling = Fp8Scaling::kBlock1x128;
  c.w_scaling = Fp8Scaling::kBlock128x128;
  c.out = DType::kBF16;
  LOWBIT_REQUIRE_FP8_MODE(90, true);
  run_fp8(c, {4, 64}, {{384, 128}, {264, 400}});
}

TEST(cublas_baseline, fp8_block_f16_f32_out) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_scaling = Fp8Scaling::kBlock1x128;
  c.w_scaling = Fp8Scaling::kBlock128x128;
  LOWBIT_REQUIRE_FP8_MODE(90, true);
  c.out = DType::kF16;
  run_fp8(c, {16}, {{256, 512}});
  c.out = DType::kF32;
  run_fp8(c, {16}, {{256, 512}});
}

TEST(cublas_baseline, fp8_block_1x128_weights_1x128_row_tensor) {
  LOWBIT_REQUIRE_GPU();
  Fp8Case c;
  c.a_scaling = Fp8Scaling::kBlock1x128;
  c.out = DType::kBF16;
  LOWBIT_REQUIRE_FP8_MODE(90, true);
  for (Fp8Scaling ws : {Fp8Scaling::kBlock1x128, Fp8Scaling::kPerRow, Fp8Scaling::kPerTensor}) {
    c.w_scaling = ws;
    run_fp8(c, {4, 64}, {{256, 512}});
  }
}

TEST(cublas_baseline, fp8_refusals_name_the_rule) {
  LOWBIT_REQUIRE_GPU();
  auto reason = [](const GemmDesc& d) {
    return Gemm(d, Device::cuda(0), GemmOptions{"cublas_baseline"}).can_implement().message();
  };
  Fp8Case c;
  if (current_cc() < 89) {
    EXPECT_NE(reason(fp8_desc(c, 16, 256, 512)).find("compute capability"), std::string::npos);
    GTEST_SKIP() << "fp8 needs sm_89+";
  }
  EXPECT_NE(reason(fp8_desc(c, 16, 256, 520)).find("multiple of 16"), std::string::npos)
      << reason(fp8_desc(c, 16, 256, 520));  // k = 520 is not a multiple of 16
  c.a_dtype = DType::kE5M2;
  c.w_dtype = DType::kE5M2;
  EXPECT_NE(reason(fp8_desc(c, 16, 256, 512)).find("e5m2 x e5m2"), std::string::npos);
  c = Fp8Case{};
  c.a_scaling = Fp8Scaling::kPerTensor;
  c.w_scaling = Fp8Scaling::kBlock128x128;
  EXPECT_NE(reason(fp8_desc(c, 16, 256, 512)).find("per-tensor activation"), std::string::npos);
  if (current_cc() == 90) {
    c.a_scaling = Fp8Scaling::kBlock1x128;  // m = 1 is not a multiple of 4
    EXPECT_NE(reason(fp8_desc(c, 1, 256, 512)).find("multiples of 4"), std::string::npos)
        << reason(fp8_desc(c, 1, 256, 512));
  }
}

}  // namespace
}  // namespace lowbit::test
