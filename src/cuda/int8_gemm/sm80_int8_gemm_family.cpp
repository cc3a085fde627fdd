// Host side of the sm80 int8 GEMM family: what it accepts (docs/kernels/int8_gemm.md,
// "sm80_int8_gemm"). The kernels (sm80_int8_gemm_kernels.cu), the tile table, the heuristic,
// the split-K reduction and the implementation (packing, workspace, run()) are the sm89 fp8
// GEMM's, which switches to the int8 kernels for int8 weights
// (fp8_gemm/sm89_fp8_gemm_family.cpp).
#include "cuda/int8_gemm/sm80_int8_gemm_family.hpp"

#include <string>

#include "cuda/fp8_gemm/sm89_fp8_gemm_family.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"

namespace lowbit::cuda {

namespace {
constexpr const char* kWho = "lowbit: sm80_int8_gemm: ";
}  // namespace

Status sm80_int8_gemm_runs_on(const GpuSpec& gpu) {
  if (gpu.cc < 80)
    return Status::Fail(std::string(kWho) + "needs compute capability 8.0 or newer (mma.sync with s8 operands, " +
                        "cp.async); " + gpu.name + " is sm_" + std::to_string(gpu.cc));
  if (!build_has_code_for(gpu.cc, 80))
    return Status::Fail(std::string(kWho) + "this build has no sm_80+ code that runs on sm_" + std::to_string(gpu.cc) +
                        " (LOWBIT_CUDA_ARCHITECTURES)");
  return Status::Ok();
}

Status sm80_int8_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  if (Status s = int8_gemm_check(d, kWho); !s.ok()) return s;
  auto fail = [&](const std::string& why) { return Status::Fail(std::string(kWho) + why + " (" + d.describe() + ")"); };
  // 32-bit tile and column arithmetic in the kernel; the grid's x dimension counts tiles
  // (k is bounded by int8_gemm_check: exact int32 sums).
  if (d.m > (int64_t{1} << 24)) return fail("needs m <= 2^24, m=" + std::to_string(d.m));
  if (d.n > (int64_t{1} << 24)) return fail("needs n <= 2^24, n=" + std::to_string(d.n));
  if (d.m * d.n > (int64_t{1} << 40)) return fail("needs m * n <= 2^40");
  return Status::Ok();
}

Sm80Int8Plan sm80_int8_gemm_plan(const GemmDesc& desc, const GpuSpec& gpu) {
  // The sm89 model, fed with the int8 kernels' occupancy (it picks the kernels by the weights).
  return sm89_fp8_gemm_plan(desc, gpu);
}

std::unique_ptr<detail::GemmImpl> sm80_int8_gemm_make_with_plan(const GemmDesc& desc, const GpuSpec& gpu,
                                                                const Sm80Int8Plan& plan) {
  throw_if_error(int8_gemm_check(desc, kWho));
  return sm89_8bit_gemm_make_impl(desc, gpu, plan);
}

std::unique_ptr<detail::GemmImpl> sm80_int8_gemm_make(const GemmDesc& desc, const GpuSpec& gpu) {
  return sm80_int8_gemm_make_with_plan(desc, gpu, sm80_int8_gemm_plan(desc, gpu));
}

}  // namespace lowbit::cuda
