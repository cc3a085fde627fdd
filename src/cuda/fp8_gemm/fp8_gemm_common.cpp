// The shared contract of lowbit's fp8 GEMM kernels (fp8_gemm_common.hpp).
#include "cuda/fp8_gemm/fp8_gemm_common.hpp"

#include <cstring>

namespace lowbit::cuda {

namespace {
bool epilogue_scaling(Fp8Scaling s) { return s == Fp8Scaling::kPerTensor || s == Fp8Scaling::kPerRow; }
}  // namespace

Status fp8_gemm_check(const GemmDesc& d, const std::string& who) {
  auto fail = [&](const std::string& why) { return Status::Fail(who + why + " (" + d.describe() + ")"); };
  if (d.w.kind != WeightKind::kFp8) return fail("takes fp8 weights only");
  if (d.a.dtype != DType::kE4M3 || d.w.fp8.dtype != DType::kE4M3)
    return fail("takes e4m3fn activations and weights only (e5m2 goes to cublas_baseline)");
  if (d.out_dtype != DType::kF16 && d.out_dtype != DType::kBF16)
    return fail(std::string("writes f16 or bf16 output, not ") + dtype_name(d.out_dtype));
  const Fp8Scaling sa = d.a.fp8_scaling, sw = d.w.fp8.scaling;
  const bool scaled = epilogue_scaling(sa) && epilogue_scaling(sw);
  const bool block = sa == Fp8Scaling::kBlock1x128 && sw == Fp8Scaling::kBlock128x128;
  if (!scaled && !block)
    return fail(std::string("takes activation x weight scalings tensor|row x tensor|row or 1x128 x 128x128, not ") +
                fp8_scaling_name(sa) + " x " + fp8_scaling_name(sw));
  if (d.m < 1 || d.n < 1 || d.k < 1) return fail("needs m, n, k >= 1");
  if (d.n % 16 != 0) return fail("needs n to be a multiple of 16 (16-byte output rows), n=" + std::to_string(d.n));
  if (d.k % 16 != 0) return fail("needs k to be a multiple of 16 (16-byte rows of A and W), k=" + std::to_string(d.k));
  if (d.k > (int64_t(1) << 31) || d.n > (int64_t(1) << 31) || d.m > (int64_t(1) << 31))
    return fail("needs m, n, k < 2^31");
  return Status::Ok();
}

Fp8GemmMode fp8_gemm_mode(const GemmDesc& d) {
  return d.a.fp8_scaling == Fp8Scaling::kBlock1x128 ? Fp8GemmMode::kBlock : Fp8GemmMode::kScaled;
}

PackedWeight pack_fp8_nk(const Fp8Tensor& w, const GemmDesc& d, const std::string& who) {
  throw_if_error(w.validate());
  if (!(w.format == d.w.fp8) || w.rows != d.n || w.cols != d.k)
    throw Error(who + "pack: the weight is " + w.format.name() + " (" + std::to_string(w.rows) + ", " +
                std::to_string(w.cols) + "), the GEMM wants " + d.w.fp8.name() + " (" + std::to_string(d.n) +
                ", " + std::to_string(d.k) + ")");
  PackedWeight p;
  p.layout = kFp8NkLayout;
  p.format = d.w;
  p.n = d.n;
  p.k = d.k;
  p.data = w.codes;
  p.scales.resize(w.scales.size() * sizeof(float));
  std::memcpy(p.scales.data(), w.scales.data(), p.scales.size());
  return p;
}

}  // namespace lowbit::cuda
