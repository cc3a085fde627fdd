// Gemm::run is stream-ordered and capturable: a CUDA graph of one run, replayed, gives the
// eager result bit for bit; runs on two streams at once (each with its own workspace and
// output, issued from two host threads) give the eager results.
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/quantize.hpp"
#include "test_gpu_common.hpp"

namespace lowbit::test {
namespace {

int current_cc() {
  const std::vector<GpuInfo> gpus = list_gpus();
  return gpus.empty() ? 0 : gpus[0].cc();
}

// One problem's operands on the device, with its own output and workspace.
struct Problem {
  DeviceBuffer a, a_scales, w, w_scales, out, workspace;
  GemmArgs args() const {
    GemmArgs g;
    g.a = a.get();
    g.a_scales = a_scales.get();
    g.w = WeightView{w.get(), w_scales.get(), nullptr, nullptr};
    g.out = out.get();
    return g;
  }
};

// Fresh operands for `g` (dense or fp8, per its desc), drawn from `rng`.
Problem make_problem(const Gemm& g, std::mt19937& rng) {
  const GemmDesc& d = g.desc();
  Problem p;
  const std::vector<float> a = random_normal(rng, d.m * d.k);
  const std::vector<float> w = random_normal(rng, d.n * d.k);
  if (d.w.kind == WeightKind::kFp8) {
    const Fp8Tensor qa = quantize_fp8(a.data(), d.m, d.k, Fp8Format{d.a.dtype, d.a.fp8_scaling});
    const PackedWeight pw = g.pack(quantize_fp8(w.data(), d.n, d.k, d.w.fp8));
    p.a = DeviceBuffer(qa.codes);
    p.a_scales = DeviceBuffer(bytes_of(gemm_a_scales(qa)));
    p.w = DeviceBuffer(pw.data);
    p.w_scales = DeviceBuffer(pw.scales);
  } else {
    const std::vector<uint8_t> wb = encode(w, d.w.dense_dtype);
    p.a = DeviceBuffer(encode(a, d.a.dtype));
    p.w = DeviceBuffer(g.pack_dense(wb.data()).data);
  }
  p.out = DeviceBuffer(static_cast<std::size_t>(d.m * d.n) * dtype_size(d.out_dtype));
  p.workspace = DeviceBuffer(g.workspace_size());
  return p;
}

std::vector<uint8_t> eager(const Gemm& g, Problem& p, cudaStream_t s) {
  p.out.poison(s);
  const Status st = g.run(p.args(), p.workspace.get(), s);
  EXPECT_TRUE(st.ok()) << st.message();
  LOWBIT_CUDA_CHECK(cudaStreamSynchronize(s));
  return p.out.download();
}

void check_graph_replay(const GemmDesc& d, const std::string& family) {
  SCOPED_TRACE(d.describe() + " family " + family);
  Gemm g(d, Device::cuda(0), GemmOptions{family});
  ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
  std::mt19937 rng(99);
  Problem p = make_problem(g, rng);
  StreamHolder stream;
  const std::vector<uint8_t> expected = eager(g, p, stream.get());

  capture_and_replay(
      stream.get(), [&] { return g.run(p.args(), p.workspace.get(), stream.get()); }, 3,
      [&](int) { p.out.poison(stream.get()); },
      [&](int replay) {
        EXPECT_TRUE(p.out.download() == expected) << "graph replay " << replay << " differs from eager";
      });
}

void check_two_streams(const GemmDesc& d, const std::string& family) {
  SCOPED_TRACE(d.describe() + " family " + family);
  Gemm g(d, Device::cuda(0), GemmOptions{family});
  ASSERT_TRUE(g.can_implement().ok()) << g.can_implement().message();
  std::mt19937 rng(7);
  Problem p1 = make_problem(g, rng);
  Problem p2 = make_problem(g, rng);
  StreamHolder s1, s2;
  const std::vector<uint8_t> e1 = eager(g, p1, s1.get());
  const std::vector<uint8_t> e2 = eager(g, p2, s2.get());
  p1.out.poison(s1.get());
  p2.out.poison(s2.get());
  LOWBIT_CUDA_CHECK(cudaDeviceSynchronize());

  // Both threads issue several runs; the Gemm object is shared.
  Status st1, st2;
  auto issue = [&g](Problem* p, cudaStream_t s, Status* out) {
    (void)cudaSetDevice(0);  // the runtime's current device is per thread
    for (int i = 0; i < 4 && out->ok(); ++i) *out = g.run(p->args(), p->workspace.get(), s);
  };
  std::thread t1(issue, &p1, s1.get(), &st1);
  std::thread t2(issue, &p2, s2.get(), &st2);
  t1.join();
  t2.join();
  EXPECT_TRUE(st1.ok()) << st1.message();
  EXPECT_TRUE(st2.ok()) << st2.message();
  s1.sync();
  s2.sync();
  EXPECT_TRUE(p1.out.download() == e1) << "stream 1 result differs from eager";
  EXPECT_TRUE(p2.out.download() == e2) << "stream 2 result differs from eager";
}

GemmDesc dense_f16(int64_t m) {
  GemmDesc d;
  d.m = m;
  d.n = 256;
  d.k = 512;
  d.a.dtype = DType::kF16;
  d.w = WeightFormat::dense(DType::kF16);
  d.out_dtype = DType::kF16;
  return d;
}

GemmDesc fp8(Fp8Scaling a, Fp8Scaling w, int64_t m) {
  GemmDesc d;
  d.m = m;
  d.n = 256;
  d.k = 512;
  d.a.dtype = DType::kE4M3;
  d.a.fp8_scaling = a;
  d.w = WeightFormat::fp8_format(Fp8Format{DType::kE4M3, w});
  d.out_dtype = DType::kBF16;
  return d;
}

TEST(graph_capture, cublas_baseline_dense_f16) {
  LOWBIT_REQUIRE_GPU();
  check_graph_replay(dense_f16(17), "cublas_baseline");
  check_graph_replay(dense_f16(256), "cublas_baseline");
}

TEST(graph_capture, cublas_baseline_fp8_tensor) {
  LOWBIT_REQUIRE_GPU();
  if (current_cc() < 89) GTEST_SKIP() << "fp8 needs sm_89+";
  check_graph_replay(fp8(Fp8Scaling::kPerTensor, Fp8Scaling::kPerTensor, 17), "cublas_baseline");
}

// 1x128 activation scales are transposed into the workspace by cublasLtMatrixTransform
// inside run(): that launch must be captured too.
TEST(graph_capture, cublas_baseline_fp8_block) {
  LOWBIT_REQUIRE_GPU();
  if (current_cc() != 90) GTEST_SKIP() << "cuBLASLt block scaling needs sm_90";
  check_graph_replay(fp8(Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128, 64), "cublas_baseline");
}

TEST(graph_capture, cublas_baseline_two_streams) {
  LOWBIT_REQUIRE_GPU();
  check_two_streams(dense_f16(65), "cublas_baseline");
  if (current_cc() >= 89)
    check_two_streams(fp8(Fp8Scaling::kPerTensor, Fp8Scaling::kPerTensor, 65), "cublas_baseline");
  if (current_cc() == 90)
    check_two_streams(fp8(Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128, 64), "cublas_baseline");
}

// lowbit's Hopper fp8 kernel: tensor maps are encoded inside run() and passed by value, so
// a captured launch keeps them; m = 1 and 17 plan split-K (a second, reduce launch).
TEST(graph_capture, sm90_fp8_gemm) {
  LOWBIT_REQUIRE_GPU();
  if (current_cc() != 90) GTEST_SKIP() << "sm90_fp8_gemm needs sm_90";
  for (int64_t m : {1, 17, 200}) {
    check_graph_replay(fp8(Fp8Scaling::kPerTensor, Fp8Scaling::kPerTensor, m), "sm90_fp8_gemm");
    check_graph_replay(fp8(Fp8Scaling::kPerRow, Fp8Scaling::kPerRow, m), "sm90_fp8_gemm");
    check_graph_replay(fp8(Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128, m), "sm90_fp8_gemm");
  }
  check_two_streams(fp8(Fp8Scaling::kBlock1x128, Fp8Scaling::kBlock128x128, 5), "sm90_fp8_gemm");
  check_two_streams(fp8(Fp8Scaling::kPerTensor, Fp8Scaling::kPerTensor, 130), "sm90_fp8_gemm");
}

}  // namespace
}  // namespace lowbit::test
