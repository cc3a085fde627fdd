#include "cuda/mixed_gemm/tiled_gemm_check.hpp"

#include <string>

#include "lowbit/pack.hpp"

namespace lowbit::cuda {

Status tiled_gemm_check(const GemmDesc& d, const char* who) {
  auto fail = [&](const std::string& why) { return Status::Fail(std::string(who) + why + " (" + d.describe() + ")"); };
  if (d.w.kind != WeightKind::kInt) return fail("takes integer weights, not " + d.w.name());
  const IntWeightFormat& f = d.w.int_format;
  if (d.a.dtype != DType::kF16 && d.a.dtype != DType::kBF16)
    return fail(std::string("activations must be f16 or bf16, not ") + dtype_name(d.a.dtype));
  if (d.out_dtype != d.a.dtype)
    return fail(std::string("output dtype ") + dtype_name(d.out_dtype) + " must equal the activation dtype " +
                dtype_name(d.a.dtype));
  if (f.scale_dtype != d.a.dtype)
    return fail(std::string("weight scale dtype ") + dtype_name(f.scale_dtype) + " must equal the activation dtype " +
                dtype_name(d.a.dtype));
  if (Status s = tiled_layout_supports(f, d.n, d.k); !s.ok()) return s;
  if (d.n % 64 != 0) return fail("weight N=" + std::to_string(d.n) + " is not a multiple of 64");
  if (d.m > (int64_t{1} << 24)) return fail("M=" + std::to_string(d.m) + " exceeds 2^24");
  return Status::Ok();
}

}  // namespace lowbit::cuda
