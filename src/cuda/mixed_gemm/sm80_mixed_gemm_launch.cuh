// Launchers of the sm80 mixed GEMM kernels, instantiated once per (activation dtype, bits)
// by the thin translation units sm80_mixed_gemm_{f16,bf16}_w{4,8}.cu, over every row of
// kMixedGemmConfigs (heuristics/sm80_mixed_gemm_heuristic.hpp).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/mixed_gemm/sm80_mixed_gemm.cuh"
#include "cuda/mixed_gemm/sm80_mixed_gemm_params.hpp"

namespace lowbit::cuda {

template <typename T, int BITS, int CFG, bool SMALL>
Status launch_mixed_gemm_config(const MixedGemmParams& p, int splits, bool pdl, Stream stream) {
  using K = Sm80MixedGemm<T, BITS, CFG, SMALL>;
  auto* kernel = &sm80_mixed_gemm_kernel<T, BITS, CFG, SMALL>;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(p.m_tiles * p.n_tiles), 1, static_cast<unsigned>(splits));
  cfg.blockDim = dim3(K::THREADS);
  cfg.dynamicSmemBytes = K::smem_bytes(p.m);
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (static_cast<MixedGemmSplitMode>(p.split_mode) == MixedGemmSplitMode::kCluster)
    attr[n++] = cluster_launch_attr(1, 1, static_cast<unsigned>(splits));
  if (pdl) attr[n++] = pdl_launch_attr();
  cfg.attrs = n > 0 ? attr : nullptr;
  cfg.numAttrs = n;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, p));
  return Status::Ok();
}

template <typename T, int BITS, int CFG, bool SMALL>
Status prepare_mixed_gemm_config(int m, int* ctas_per_sm) {
  using K = Sm80MixedGemm<T, BITS, CFG, SMALL>;
  auto* kernel = &sm80_mixed_gemm_kernel<T, BITS, CFG, SMALL>;
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kMaxSmemBytes));
  // All of the SM's shared memory for the L1/shared split: the occupancy below needs it.
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared));
  LOWBIT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kernel, K::THREADS, K::smem_bytes(m)));
  return Status::Ok();
}

// Whether row CFG has a SMALL variant distinct from the table one (fewer stages); where it
// has none, the table variant already fits kMixedGemmSmallSmemBytes and serves both.
template <typename T, int BITS, int CFG>
inline constexpr bool kHasSmallVariant = Sm80MixedGemm<T, BITS, CFG, true>::STAGES < Sm80MixedGemm<T, BITS, CFG>::STAGES;

template <typename T, int BITS, int... CFGS>
Status launch_mixed_gemm_dispatch(std::integer_sequence<int, CFGS...>, const MixedGemmParams& p, int cfg, bool small,
                                  int splits, bool pdl, Stream stream) {
  Status s = Status::Fail("lowbit: sm80_mixed_gemm: no tile configuration " + std::to_string(cfg));
  auto one = [&](auto cfg_c) {
    constexpr int C = decltype(cfg_c)::value;
    if constexpr (kHasSmallVariant<T, BITS, C>) {
      if (small) {
        (void)(s = launch_mixed_gemm_config<T, BITS, C, true>(p, splits, pdl, stream));
        return;
      }
    }
    (void)(s = launch_mixed_gemm_config<T, BITS, C, false>(p, splits, pdl, stream));
  };
  ((cfg == CFGS ? one(std::integral_constant<int, CFGS>{}) : (void)0), ...);
  return s;
}

template <typename T, int BITS, int... CFGS>
Status prepare_mixed_gemm_dispatch(std::integer_sequence<int, CFGS...>, int cfg, bool small, int m, int* ctas_per_sm) {
  Status s = Status::Fail("lowbit: sm80_mixed_gemm: no tile configuration " + std::to_string(cfg));
  auto one = [&](auto cfg_c) {
    constexpr int C = decltype(cfg_c)::value;
    if constexpr (kHasSmallVariant<T, BITS, C>) {
      if (small) {
        (void)(s = prepare_mixed_gemm_config<T, BITS, C, true>(m, ctas_per_sm));
        return;
      }
    }
    (void)(s = prepare_mixed_gemm_config<T, BITS, C, false>(m, ctas_per_sm));
  };
  ((cfg == CFGS ? one(std::integral_constant<int, CFGS>{}) : (void)0), ...);
  return s;
}

template <typename T, int BITS, int... CFGS>
MixedGemmVariant mixed_gemm_variant_dispatch(std::integer_sequence<int, CFGS...>, int cfg, bool small) {
  MixedGemmVariant v;
  auto one = [&](auto cfg_c) {
    constexpr int C = decltype(cfg_c)::value;
    using Table = Sm80MixedGemm<T, BITS, C, false>;
    using Small = Sm80MixedGemm<T, BITS, C, true>;
    const bool use_small = small && kHasSmallVariant<T, BITS, C>;
    v.stages = use_small ? Small::STAGES : Table::STAGES;
    v.max_smem_bytes = use_small ? Small::kMaxSmemBytes : Table::kMaxSmemBytes;
  };
  ((cfg == CFGS ? one(std::integral_constant<int, CFGS>{}) : (void)0), ...);
  return v;
}

template <typename T, int BITS>
const MixedGemmKernels& mixed_gemm_kernels() {
  using Seq = std::make_integer_sequence<int, kMixedGemmConfigCount>;
  static const MixedGemmKernels kKernels = {
      [](const MixedGemmParams& p, int cfg, bool small, int splits, bool pdl, Stream stream) {
        return launch_mixed_gemm_dispatch<T, BITS>(Seq{}, p, cfg, small, splits, pdl, stream);
      },
      [](int cfg, bool small, int m, int* ctas_per_sm) {
        return prepare_mixed_gemm_dispatch<T, BITS>(Seq{}, cfg, small, m, ctas_per_sm);
      },
      [](int cfg, bool small) { return mixed_gemm_variant_dispatch<T, BITS>(Seq{}, cfg, small); },
  };
  return kKernels;
}

}  // namespace lowbit::cuda
