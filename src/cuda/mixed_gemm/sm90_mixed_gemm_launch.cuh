// The instantiated sm90_mixed_gemm kernels of one (activation dtype, bits) pair (every row of
// kSm90MixedConfigs) and their launches; included by one thin .cu per pair so the four
// compile in parallel.
#pragma once

#include <string>

#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm.cuh"

namespace lowbit::cuda {

namespace sm90mixed {

using KernelFn = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap,
                          const Sm90MixedParams);

template <typename T, int kBits, int C, bool kCluster>
KernelFn kernel_of() {
  constexpr Sm90MixedConfig c = kSm90MixedConfigs[C];
  static_assert(sm90_mixed_smem_bytes(c, kBits) <= 227 * 1024, "a configuration needs more than 227 KB");
  static_assert(!kCluster || sm90_mixed_cluster_smem_bytes(c, kBits) <= 227 * 1024,
                "a cluster configuration needs more than 227 KB");
  return &sm90_mixed_gemm_kernel<T, kBits, c.block_tokens, c.stages, kCluster>;
}

// cluster > 1: the cluster kernel, compiled for kSm90MixedClusterConfig only.
template <typename T, int kBits>
KernelFn kernel_for(int config, int cluster) {
  static_assert(kSm90MixedConfigCount == 3, "one line per configuration below");
  if (cluster > 1) return config == kSm90MixedClusterConfig ? kernel_of<T, kBits, kSm90MixedClusterConfig, true>() : nullptr;
  switch (config) {
    case 0: return kernel_of<T, kBits, 0, false>();
    case 1: return kernel_of<T, kBits, 1, false>();
    case 2: return kernel_of<T, kBits, 2, false>();
    default: return nullptr;
  }
}

inline int smem_of(int config, int cluster, int bits) {
  const Sm90MixedConfig& c = kSm90MixedConfigs[config];
  return cluster > 1 ? sm90_mixed_cluster_smem_bytes(c, bits) : sm90_mixed_smem_bytes(c, bits);
}

inline Status no_kernel(int config, int cluster) {
  return Status::Fail("lowbit: sm90_mixed_gemm: no kernel for configuration " + std::to_string(config) +
                      (cluster > 1 ? " with clusters of " + std::to_string(cluster) : std::string()));
}

template <typename T, int kBits>
Status prepare(int config, int cluster) {
  KernelFn k = kernel_for<T, kBits>(config, cluster);
  if (k == nullptr) return no_kernel(config, cluster);
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_of(config, cluster, kBits)));
  return Status::Ok();
}

template <typename T, int kBits>
Status launch(int config, const CUtensorMap& x, const CUtensorMap& w, const CUtensorMap& sc, const CUtensorMap& z,
              const Sm90MixedParams& p, int grid, bool pdl, cudaStream_t stream) {
  KernelFn k = kernel_for<T, kBits>(config, p.cluster);
  if (k == nullptr) return no_kernel(config, p.cluster);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = static_cast<size_t>(smem_of(config, p.cluster, kBits));
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl) attr[n++] = pdl_launch_attr();
  if (p.cluster > 1) attr[n++] = cluster_launch_attr(static_cast<unsigned>(p.cluster), 1, 1);
  cfg.attrs = n > 0 ? attr : nullptr;
  cfg.numAttrs = n;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, k, x, w, sc, z, p));
  return Status::Ok();
}

template <typename T, int kBits>
Status resident_clusters(int config, int cluster, int* count) {
  *count = 0;
  KernelFn k = kernel_for<T, kBits>(config, cluster);
  if (k == nullptr || cluster < 2) return no_kernel(config, cluster);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(cluster * 64));
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = static_cast<size_t>(smem_of(config, cluster, kBits));
  cudaLaunchAttribute attr[1] = {cluster_launch_attr(static_cast<unsigned>(cluster), 1, 1)};
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  LOWBIT_CUDA_TRY(cudaOccupancyMaxActiveClusters(count, k, &cfg));
  return Status::Ok();
}

template <typename T, int kBits>
const Sm90MixedKernels& kernels() {
  static const Sm90MixedKernels k{&prepare<T, kBits>, &launch<T, kBits>, &resident_clusters<T, kBits>};
  return k;
}

}  // namespace sm90mixed

}  // namespace lowbit::cuda
