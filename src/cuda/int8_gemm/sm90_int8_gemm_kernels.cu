// The instantiated sm90_int8_gemm kernels: sm90_fp8_gemm's kernel with int8 operands
// (kInt8, scaled mode, no stream-K), one per tile configuration of kSm90Fp8Configs marked
// `int8` (the plan offers only those to this family).
#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/fp8_gemm/sm90_fp8_gemm.cuh"
#include "cuda/int8_gemm/sm90_int8_gemm_kernels.hpp"

namespace lowbit::cuda {

namespace {

using KernelFn = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap,
                          const Sm90Fp8Params);

// kShortA: a single row tile's A in short boxes (Sm90Fp8Params::a_short_bytes), a separate
// instantiation as in sm90_fp8_gemm_kernels.cu.
template <int C, bool kShortA>
KernelFn kernel_of() {
  constexpr Sm90Fp8Config c = kSm90Fp8Configs[C];
  return &sm90fp8::sm90_fp8_gemm_kernel<c.consumers, c.block_n, c.stages, false, false, true, c.waves,
                                         c.epilogue_copies, c.k_pair, kShortA>;
}

template <int C>
KernelFn kernel_of(bool short_a) {
  return short_a ? kernel_of<C, true>() : kernel_of<C, false>();
}

KernelFn kernel_for(int config, bool short_a) {
  static_assert(kSm90Fp8ConfigCount == 11 && kSm90Fp8Configs[3].int8 && !kSm90Fp8Configs[4].int8 &&
                    !kSm90Fp8Configs[5].int8 && !kSm90Fp8Configs[6].int8 && !kSm90Fp8Configs[7].int8 &&
                    !kSm90Fp8Configs[8].int8 && !kSm90Fp8Configs[9].int8 && !kSm90Fp8Configs[10].int8,
                "one line per int8 configuration below");
  switch (config) {
    case 0: return kernel_of<0>(short_a);
    case 1: return kernel_of<1>(short_a);
    case 2: return kernel_of<2>(short_a);
    case 3: return kernel_of<3>(short_a);
    default: return nullptr;
  }
}

}  // namespace

Status sm90_int8_gemm_prepare(int config) {
  for (bool short_a : {false, true}) {
    KernelFn k = kernel_for(config, short_a);
    if (k == nullptr) return Status::Fail("lowbit: sm90_int8_gemm: no configuration " + std::to_string(config));
    LOWBIT_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         sm90_fp8_smem_bytes(kSm90Fp8Configs[config])));
  }
  return Status::Ok();
}

Status sm90_int8_gemm_launch(int config, const CUtensorMap& a, const CUtensorMap& w, const CUtensorMap& out,
                             const Sm90Fp8Params& p, int grid, bool pdl, cudaStream_t stream) {
  KernelFn k = kernel_for(config, p.a_short_bytes != 0);
  if (k == nullptr) return Status::Fail("lowbit: sm90_int8_gemm: no configuration " + std::to_string(config));
  const Sm90Fp8Config& c = kSm90Fp8Configs[config];
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(static_cast<unsigned>((c.consumers + 1) * 128));
  cfg.dynamicSmemBytes = static_cast<size_t>(sm90_fp8_smem_bytes(c));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1u : 0u;
  const CUtensorMap unused{};  // the activation-scale map of block mode
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, k, a, w, unused, out, p));
  return Status::Ok();
}

}  // namespace lowbit::cuda
