// The shared contract of lowbit's int8 W8A8 GEMM kernels (int8_gemm_common.hpp).
#include "cuda/int8_gemm/int8_gemm_common.hpp"

#include <cstring>
#include <vector>

namespace lowbit::cuda {

Status int8_gemm_check(const GemmDesc& d, const std::string& who) {
  auto fail = [&](const std::string& why) { return Status::Fail(who + why + " (" + d.describe() + ")"); };
  if (d.w.kind != WeightKind::kInt8) return fail("takes int8 (W8A8) weights only");
  if (d.a.dtype != DType::kI8) return fail(std::string("takes int8 activations, not ") + dtype_name(d.a.dtype));
  if (d.out_dtype != DType::kF16 && d.out_dtype != DType::kBF16)
    return fail(std::string("writes f16 or bf16 output, not ") + dtype_name(d.out_dtype));
  if (d.m < 1 || d.n < 1 || d.k < 1) return fail("needs m, n, k >= 1");
  if (d.n % 16 != 0) return fail("needs n to be a multiple of 16 (16-byte output rows), n=" + std::to_string(d.n));
  if (d.k % 16 != 0) return fail("needs k to be a multiple of 16 (16-byte rows of A and W), k=" + std::to_string(d.k));
  if (d.k > kInt8GemmMaxK)
    return fail("needs k <= " + std::to_string(kInt8GemmMaxK) + " (exact int32 sums of int8 products), k=" +
                std::to_string(d.k));
  if (d.n > (int64_t(1) << 31) || d.m > (int64_t(1) << 31)) return fail("needs m, n < 2^31");
  return Status::Ok();
}

PackedWeight pack_int8_nk(const Int8Tensor& w, const GemmDesc& d, const std::string& who) {
  throw_if_error(w.validate());
  if (w.has_zero_point()) throw Error(who + "pack: int8 weights must be symmetric (no zero points)");
  if (w.rows != d.n || w.cols != d.k)
    throw Error(who + "pack: the weight is (" + std::to_string(w.rows) + ", " + std::to_string(w.cols) +
                "), the GEMM wants (" + std::to_string(d.n) + ", " + std::to_string(d.k) + ")");
  PackedWeight p;
  p.layout = kInt8NkLayout;
  p.format = d.w;
  p.n = d.n;
  p.k = d.k;
  p.data.resize(w.codes.size());
  std::memcpy(p.data.data(), w.codes.data(), p.data.size());
  p.scales.resize(w.scales.size() * sizeof(float));
  std::memcpy(p.scales.data(), w.scales.data(), p.scales.size());
  std::vector<int32_t> sums(static_cast<std::size_t>(w.rows), 0);
  for (int64_t r = 0; r < w.rows; ++r) {
    int32_t s = 0;
    const int8_t* row = w.codes.data() + r * w.cols;
    for (int64_t c = 0; c < w.cols; ++c) s += row[c];
    sums[static_cast<std::size_t>(r)] = s;
  }
  p.zeros.resize(sums.size() * sizeof(int32_t));
  std::memcpy(p.zeros.data(), sums.data(), p.zeros.size());
  return p;
}

}  // namespace lowbit::cuda
