// The README's usage example: quantize a weight to w4g128, run Y = X * W^T through the
// lowbit::Gemm API, and compare with the reference. Built and run as a test (ctest -R readme).
// It uses the CPU device so it runs anywhere; on a GPU, use Device::cuda(0), upload each
// buffer of the PackedWeight and the activations with cudaMemcpy, and pass a stream.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "lowbit/lowbit.hpp"

int main() {
  const int64_t m = 4, n = 256, k = 512;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  std::vector<float> w(n * k), x(m * k);
  for (auto& v : w) v = uni(rng);
  for (auto& v : x) v = uni(rng);

  // 1. Quantize the weight (canonical form: one code per byte, fp16 scales).
  lowbit::IntWeightFormat fmt = *lowbit::IntWeightFormat::parse("w4g128");
  lowbit::IntWeight qw = lowbit::quantize_int(w.data(), n, k, fmt);

  // 2. Describe the problem and pick a kernel for the device.
  lowbit::GemmDesc desc;
  desc.m = m; desc.n = n; desc.k = k;
  desc.a.dtype = lowbit::DType::kF16;
  desc.w = lowbit::WeightFormat::integer(fmt);
  desc.out_dtype = lowbit::DType::kF16;
  lowbit::Gemm gemm(desc, lowbit::Device::cpu());
  if (lowbit::Status s = gemm.can_implement(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }

  // 3. Pack the weights once for that kernel, then run.
  lowbit::PackedWeight packed = gemm.pack(qw);
  std::vector<uint16_t> x16(m * k), y16(m * n);
  for (int64_t i = 0; i < m * k; ++i) x16[i] = lowbit::f32_to_f16(x[i]);
  std::vector<uint8_t> workspace(gemm.workspace_size());
  lowbit::GemmArgs args;
  args.a = x16.data();
  args.w = packed.host_view();
  args.out = y16.data();
  if (lowbit::Status s = gemm.run(args, workspace.data()); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }

  // 4. Check against the reference on the same quantized operands.
  std::vector<float> xr(m * k), ref(m * n), y(m * n);
  for (int64_t i = 0; i < m * k; ++i) xr[i] = lowbit::f16_to_f32(x16[i]);
  std::vector<float> wd = lowbit::dequantize(qw);
  lowbit::gemm_nt_reference(xr.data(), wd.data(), nullptr, m, n, k, ref.data());
  for (int64_t i = 0; i < m * n; ++i) y[i] = lowbit::f16_to_f32(y16[i]);
  const double err = lowbit::relative_error(y.data(), ref.data(), m * n);
  std::printf("kernel %s, layout %s: relative error %.2e\n", gemm.kernel_name().c_str(),
              gemm.weight_layout().c_str(), err);
  return err < 1e-3 ? 0 : 1;
}
