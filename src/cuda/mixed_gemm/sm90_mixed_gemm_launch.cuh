// The instantiated sm90_mixed_gemm kernels of one (activation dtype, bits) pair (every row of
// kSm90MixedConfigs) and their launches; included by one thin .cu per pair so the four
// compile in parallel.
#pragma once

#include <string>
#include <type_traits>

#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm.cuh"

namespace lowbit::cuda {

namespace sm90mixed {

using KernelFn = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap,
                          const CUtensorMap, const Sm90MixedParams);

// nullptr where the configuration has no kernel for (T, kBits) (sm90_mixed_has_kernel), or no
// stream-K tail kernel (kTail; sm90_mixed_tail_config).
template <typename T, int kBits, int C, bool kTail>
KernelFn kernel_of() {
  constexpr Sm90MixedConfig c = kSm90MixedConfigs[C];
  static_assert(sm90_mixed_smem_bytes(c, kBits) <= 227 * 1024, "a configuration needs more than 227 KB");
  if constexpr (!sm90_mixed_has_kernel(c, std::is_same_v<T, __nv_bfloat16>, kBits) ||
                (kTail && !sm90_mixed_tail_config(c))) {
    return nullptr;
  } else {
    return &sm90_mixed_gemm_kernel<T, kBits, c.block_tokens, c.stages, c.block_k, kTail>;
  }
}

template <typename T, int kBits, bool kTail>
KernelFn kernel_for(int config) {
  static_assert(kSm90MixedConfigCount == 5, "one line per configuration below");
  switch (config) {
    case 0: return kernel_of<T, kBits, 0, kTail>();
    case 1: return kernel_of<T, kBits, 1, kTail>();
    case 2: return kernel_of<T, kBits, 2, kTail>();
    case 3: return kernel_of<T, kBits, 3, kTail>();
    case 4: return kernel_of<T, kBits, 4, kTail>();
    default: return nullptr;
  }
}

template <typename T, int kBits>
Status prepare(int config) {
  KernelFn k = kernel_for<T, kBits, false>(config);
  if (k == nullptr) return Status::Fail("lowbit: sm90_mixed_gemm: no configuration " + std::to_string(config));
  const int smem = sm90_mixed_smem_bytes(kSm90MixedConfigs[config], kBits);
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  if (KernelFn kt = kernel_for<T, kBits, true>(config))
    LOWBIT_CUDA_TRY(cudaFuncSetAttribute(kt, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  return Status::Ok();
}

template <typename T, int kBits>
Status launch(int config, const CUtensorMap& x, const CUtensorMap& x_last, const CUtensorMap& w,
              const CUtensorMap& sc, const CUtensorMap& z, const Sm90MixedParams& p, int grid, bool pdl,
              cudaStream_t stream) {
  KernelFn k = p.sk_tiles > 0 ? kernel_for<T, kBits, true>(config) : kernel_for<T, kBits, false>(config);
  if (k == nullptr)
    return Status::Fail("lowbit: sm90_mixed_gemm: no configuration " + std::to_string(config) +
                        (p.sk_tiles > 0 ? " with a stream-K tail" : ""));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = static_cast<size_t>(sm90_mixed_smem_bytes(kSm90MixedConfigs[config], kBits));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1u : 0u;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, k, x, x_last, w, sc, z, p));
  return Status::Ok();
}

template <typename T, int kBits>
const Sm90MixedKernels& kernels() {
  static const Sm90MixedKernels k{&prepare<T, kBits>, &launch<T, kBits>};
  return k;
}

}  // namespace sm90mixed

}  // namespace lowbit::cuda
