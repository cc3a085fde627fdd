// Launchers of the sm89 fp8 GEMM kernels, instantiated once per scaling mode by the thin
// translation units sm89_fp8_gemm_{scaled,block}.cu, and once for int8 by
// int8_gemm/sm80_int8_gemm_kernels.cu, over every row of kSm89Fp8Configs
// (heuristics/sm89_fp8_gemm_heuristic.hpp).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/fp8_gemm/sm89_fp8_gemm.cuh"
#include "cuda/fp8_gemm/sm89_fp8_gemm_params.hpp"

namespace lowbit::cuda {

template <int CFG, bool BLOCK, Sm89Fp8Element ELEM>
Status launch_sm89_fp8_config(const Sm89Fp8GemmParams& p, int splits, bool pdl, int smem_floor, Stream stream) {
  using K = Sm89Fp8Gemm<CFG, BLOCK, ELEM>;
  auto* kernel = &sm89_fp8_gemm_kernel<CFG, BLOCK, ELEM>;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(p.m_tiles * p.n_tiles), 1, static_cast<unsigned>(splits));
  cfg.blockDim = dim3(K::THREADS);
  cfg.dynamicSmemBytes = static_cast<size_t>(K::smem_bytes(p.m) > smem_floor ? K::smem_bytes(p.m) : smem_floor);
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  int n = 0;
  if (static_cast<Sm89Fp8SplitMode>(p.split_mode) == Sm89Fp8SplitMode::kCluster)
    attr[n++] = cluster_launch_attr(1, 1, static_cast<unsigned>(splits));
  if (pdl) attr[n++] = pdl_launch_attr();
  cfg.attrs = n > 0 ? attr : nullptr;
  cfg.numAttrs = static_cast<unsigned>(n);
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, p));
  return Status::Ok();
}

template <int CFG, bool BLOCK, Sm89Fp8Element ELEM>
Status prepare_sm89_fp8_config(int m, int* ctas_per_sm) {
  using K = Sm89Fp8Gemm<CFG, BLOCK, ELEM>;
  auto* kernel = &sm89_fp8_gemm_kernel<CFG, BLOCK, ELEM>;
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kMaxSmemBytes));
  // All of the SM's shared memory for the L1/shared split: the occupancy below needs it.
  LOWBIT_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared));
  LOWBIT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kernel, K::THREADS, K::smem_bytes(m)));
  return Status::Ok();
}

// How many clusters of `splits` CTAs (the kCluster split mode) the GPU keeps resident at once
// for m tokens: a cluster must fit one GPC, so this can be less than SMs x CTAs per SM /
// splits (after prepare()).
template <int CFG, bool BLOCK, Sm89Fp8Element ELEM>
Status clusters_sm89_fp8_config(int m, int splits, int* clusters) {
  using K = Sm89Fp8Gemm<CFG, BLOCK, ELEM>;
  LOWBIT_CUDA_TRY(resident_clusters(reinterpret_cast<const void*>(&sm89_fp8_gemm_kernel<CFG, BLOCK, ELEM>),
                                    K::THREADS, static_cast<size_t>(K::smem_bytes(m)),
                                    dim3(1, 1, static_cast<unsigned>(splits)), clusters));
  return Status::Ok();
}

template <bool BLOCK, Sm89Fp8Element ELEM, int... CFGS>
Status clusters_sm89_fp8_dispatch(std::integer_sequence<int, CFGS...>, int cfg, int m, int splits, int* clusters) {
  Status s = Status::Fail("lowbit: sm89_fp8_gemm: no tile configuration " + std::to_string(cfg));
  ((cfg == CFGS ? (void)(s = clusters_sm89_fp8_config<CFGS, BLOCK, ELEM>(m, splits, clusters)) : (void)0), ...);
  return s;
}

template <bool BLOCK, Sm89Fp8Element ELEM, int... CFGS>
Status launch_sm89_fp8_dispatch(std::integer_sequence<int, CFGS...>, const Sm89Fp8GemmParams& p, int cfg,
                                int splits, bool pdl, int smem_floor, Stream stream) {
  Status s = Status::Fail("lowbit: sm89_fp8_gemm: no tile configuration " + std::to_string(cfg));
  ((cfg == CFGS ? (void)(s = launch_sm89_fp8_config<CFGS, BLOCK, ELEM>(p, splits, pdl, smem_floor, stream))
                : (void)0),
   ...);
  return s;
}

template <bool BLOCK, Sm89Fp8Element ELEM, int... CFGS>
Status prepare_sm89_fp8_dispatch(std::integer_sequence<int, CFGS...>, int cfg, int m, int* ctas_per_sm) {
  Status s = Status::Fail("lowbit: sm89_fp8_gemm: no tile configuration " + std::to_string(cfg));
  ((cfg == CFGS ? (void)(s = prepare_sm89_fp8_config<CFGS, BLOCK, ELEM>(m, ctas_per_sm)) : (void)0), ...);
  return s;
}

template <bool BLOCK, Sm89Fp8Element ELEM, int... CFGS>
int smem_sm89_fp8_dispatch(std::integer_sequence<int, CFGS...>, int cfg, int m) {
  int bytes = 0;
  ((cfg == CFGS ? (void)(bytes = Sm89Fp8Gemm<CFGS, BLOCK, ELEM>::smem_bytes(m)) : (void)0), ...);
  return bytes;
}

// BLOCK: the fp8 block-scaling mode; ELEM: e4m3 (sm89_fp8_gemm, the default) or int8
// (sm80_int8_gemm, scaled mode only).
template <bool BLOCK, Sm89Fp8Element ELEM = Sm89Fp8Element::kE4M3>
const Sm89Fp8GemmKernels& sm89_fp8_gemm_kernels() {
  using Seq = std::make_integer_sequence<int, kSm89Fp8ConfigCount>;
  static const Sm89Fp8GemmKernels kKernels = {
      [](const Sm89Fp8GemmParams& p, int cfg, int splits, bool pdl, int smem_floor, Stream stream) {
        return launch_sm89_fp8_dispatch<BLOCK, ELEM>(Seq{}, p, cfg, splits, pdl, smem_floor, stream);
      },
      [](int cfg, int m, int* ctas_per_sm) {
        return prepare_sm89_fp8_dispatch<BLOCK, ELEM>(Seq{}, cfg, m, ctas_per_sm);
      },
      [](int cfg, int m) { return smem_sm89_fp8_dispatch<BLOCK, ELEM>(Seq{}, cfg, m); },
      [](int cfg, int m, int splits, int* clusters) {
        return clusters_sm89_fp8_dispatch<BLOCK, ELEM>(Seq{}, cfg, m, splits, clusters);
      },
  };
  return kKernels;
}

}  // namespace lowbit::cuda
