// The instantiated sm90_fp8_gemm kernels (one per configuration x mode) and their launches.
#include "cuda/common/check.hpp"
#include "cuda/fp8_gemm/sm90_fp8_gemm.cuh"

namespace lowbit::cuda {

namespace {

using KernelFn = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap,
                          const Sm90Fp8Params);

template <int C>
constexpr bool fits() {
  return sm90_fp8_smem_bytes(kSm90Fp8Configs[C]) <= 227 * 1024;
}
static_assert(fits<0>() && fits<1>() && fits<2>() && fits<3>(),
              "a configuration needs more than 227 KB of shared memory");

template <int C, bool kBlock>
KernelFn kernel_of() {
  constexpr Sm90Fp8Config c = kSm90Fp8Configs[C];
  return &sm90fp8::sm90_fp8_gemm_kernel<c.consumers, c.block_n, c.stages, kBlock>;
}

KernelFn kernel_for(int config, bool block) {
  static_assert(kSm90Fp8ConfigCount == 4, "one line per configuration below");
  switch (config) {
    case 0: return block ? kernel_of<0, true>() : kernel_of<0, false>();
    case 1: return block ? kernel_of<1, true>() : kernel_of<1, false>();
    case 2: return block ? kernel_of<2, true>() : kernel_of<2, false>();
    case 3: return block ? kernel_of<3, true>() : kernel_of<3, false>();
    default: return nullptr;
  }
}

}  // namespace

Status sm90_fp8_gemm_prepare(int config, bool block_scaled) {
  KernelFn k = kernel_for(config, block_scaled);
  if (k == nullptr) return Status::Fail("lowbit: sm90_fp8_gemm: no configuration " + std::to_string(config));
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       sm90_fp8_smem_bytes(kSm90Fp8Configs[config])));
  return Status::Ok();
}

Status sm90_fp8_gemm_launch(int config, bool block_scaled, const CUtensorMap& a, const CUtensorMap& w,
                            const CUtensorMap& sa, const CUtensorMap& out, const Sm90Fp8Params& p, int grid,
                            cudaStream_t stream) {
  KernelFn k = kernel_for(config, block_scaled);
  if (k == nullptr) return Status::Fail("lowbit: sm90_fp8_gemm: no configuration " + std::to_string(config));
  const Sm90Fp8Config& c = kSm90Fp8Configs[config];
  k<<<grid, (c.consumers + 1) * 128, sm90_fp8_smem_bytes(c), stream>>>(a, w, sa, out, p);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

Status sm90_fp8_gemm_reduce(const Sm90Fp8Params& p, cudaStream_t stream) {
  const int64_t total4 = static_cast<int64_t>(p.m) * p.n / 4;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((total4 + threads - 1) / threads, 132 * 8);
  sm90fp8::sm90_fp8_reduce_kernel<<<static_cast<int>(blocks), threads, 0, stream>>>(p);
  LOWBIT_CUDA_TRY_LAUNCH();
  return Status::Ok();
}

}  // namespace lowbit::cuda
