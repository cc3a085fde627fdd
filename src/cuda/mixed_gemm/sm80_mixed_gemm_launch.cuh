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

// How many clusters of `splits` CTAs (the kCluster split mode) the GPU keeps resident at once
// for m tokens. Not SMs x CTAs per SM / splits: a cluster must fit inside one GPC, so the
// CTA slots a GPC has left over after its whole clusters stay empty (after prepare()).
template <typename T, int BITS, int CFG, bool SMALL>
Status mixed_gemm_config_clusters(int m, int splits, int* clusters) {
  using K = Sm80MixedGemm<T, BITS, CFG, SMALL>;
  LOWBIT_CUDA_TRY(resident_clusters(reinterpret_cast<const void*>(&sm80_mixed_gemm_kernel<T, BITS, CFG, SMALL>),
                                    K::THREADS, K::smem_bytes(m), dim3(1, 1, static_cast<unsigned>(splits)), clusters));
  return Status::Ok();
}

// Whether row CFG has a SMALL variant distinct from the table one (fewer stages); where it
// has none, the table variant already fits kMixedGemmSmallSmemBytes and serves both.
template <typename T, int BITS, int CFG>
inline constexpr bool kHasSmallVariant = Sm80MixedGemm<T, BITS, CFG, true>::STAGES < Sm80MixedGemm<T, BITS, CFG>::STAGES;

// Calls f(integral_constant<C>, bool_constant<SMALL>) for row `cfg` of the table, with SMALL
// the row's small variant when `small` is asked and the row has one; false if no row is cfg.
template <typename T, int BITS, typename F, int... CFGS>
bool with_mixed_gemm_variant(std::integer_sequence<int, CFGS...>, int cfg, bool small, F&& f) {
  auto one = [&](auto cfg_c) {
    constexpr int C = decltype(cfg_c)::value;
    if constexpr (kHasSmallVariant<T, BITS, C>) {
      if (small) return f(cfg_c, std::true_type{});
    }
    f(cfg_c, std::false_type{});
  };
  return ((cfg == CFGS ? (one(std::integral_constant<int, CFGS>{}), true) : false) || ...);
}

template <typename T, int BITS>
const MixedGemmKernels& mixed_gemm_kernels() {
  using Seq = std::make_integer_sequence<int, kMixedGemmConfigCount>;
  static const MixedGemmKernels kKernels = {
      [](const MixedGemmParams& p, int cfg, bool small, int splits, bool pdl, Stream stream) {
        Status s = Status::Fail("lowbit: sm80_mixed_gemm: no tile configuration " + std::to_string(cfg));
        with_mixed_gemm_variant<T, BITS>(Seq{}, cfg, small, [&](auto cfg_c, auto small_c) {
          (void)(s = launch_mixed_gemm_config<T, BITS, decltype(cfg_c)::value, decltype(small_c)::value>(p, splits,
                                                                                                        pdl, stream));
        });
        return s;
      },
      [](int cfg, bool small, int m, int* ctas_per_sm) {
        Status s = Status::Fail("lowbit: sm80_mixed_gemm: no tile configuration " + std::to_string(cfg));
        with_mixed_gemm_variant<T, BITS>(Seq{}, cfg, small, [&](auto cfg_c, auto small_c) {
          (void)(s = prepare_mixed_gemm_config<T, BITS, decltype(cfg_c)::value, decltype(small_c)::value>(m,
                                                                                                         ctas_per_sm));
        });
        return s;
      },
      [](int cfg, bool small, int m, int splits, int* clusters) {
        Status s = Status::Fail("lowbit: sm80_mixed_gemm: no tile configuration " + std::to_string(cfg));
        with_mixed_gemm_variant<T, BITS>(Seq{}, cfg, small, [&](auto cfg_c, auto small_c) {
          (void)(s = mixed_gemm_config_clusters<T, BITS, decltype(cfg_c)::value, decltype(small_c)::value>(
                     m, splits, clusters));
        });
        return s;
      },
      [](int cfg, bool small) {
        MixedGemmVariant v;
        with_mixed_gemm_variant<T, BITS>(Seq{}, cfg, small, [&](auto cfg_c, auto small_c) {
          using K = Sm80MixedGemm<T, BITS, decltype(cfg_c)::value, decltype(small_c)::value>;
          v.stages = K::STAGES;
          v.max_smem_bytes = K::kMaxSmemBytes;
        });
        return v;
      },
  };
  return kKernels;
}

}  // namespace lowbit::cuda
