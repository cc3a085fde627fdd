// Host side of sm90_int8_gemm: what it accepts and its plan. The implementation (tensor maps,
// launches, split-K reduction) is sm90_fp8_gemm's (fp8_gemm/sm90_fp8_gemm_family.cpp), which
// switches to the int8 kernels for int8 weights.
#include "cuda/int8_gemm/sm90_int8_gemm_family.hpp"

#include "cuda/fp8_gemm/sm90_fp8_gemm_family.hpp"
#include "cuda/int8_gemm/int8_gemm_common.hpp"

namespace lowbit::cuda {

namespace {
constexpr const char* kWho = "lowbit: sm90_int8_gemm: ";
}  // namespace

Status sm90_int8_gemm_runs_on(const GpuSpec& gpu) { return hopper_sm90a_runs_on(gpu, kWho); }

Status sm90_int8_gemm_can_implement(const GemmDesc& d, const GpuSpec& gpu) {
  (void)gpu;
  return int8_gemm_check(d, kWho);
}

// The plan is sm90_fp8_gemm's model without stream-K: the same tiles, bytes and tensor-core
// rate (Hopper's dense int8 and fp8 wgmma rates are equal), not yet fitted to int8 runs.
std::unique_ptr<detail::GemmImpl> sm90_int8_gemm_make(const GemmDesc& d, const GpuSpec& gpu) {
  return sm90_8bit_gemm_make_impl(d, gpu, sm90_fp8_gemm_plan(d.m, d.n, d.k, gpu.sm_count, /*stream_k=*/false, /*int8=*/true));
}

std::unique_ptr<detail::GemmImpl> sm90_int8_gemm_make_with_plan(const GemmDesc& d, const GpuSpec& gpu,
                                                                const Sm90Fp8Plan& plan) {
  throw_if_error(int8_gemm_check(d, kWho));
  return sm90_8bit_gemm_make_impl(d, gpu, plan);
}

}  // namespace lowbit::cuda
