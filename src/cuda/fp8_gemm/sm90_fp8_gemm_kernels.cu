// The instantiated sm90_fp8_gemm kernels (one per configuration x mode) and their launches.
#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/fp8_gemm/sm90_fp8_gemm.cuh"

namespace lowbit::cuda {

namespace {

using KernelFn = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const CUtensorMap,
                          const Sm90Fp8Params);

template <int C>
constexpr bool fits() {
  return sm90_fp8_smem_bytes(kSm90Fp8Configs[C]) <= 227 * 1024;
}
static_assert(fits<0>() && fits<1>() && fits<2>() && fits<3>() && fits<4>() && fits<5>() && fits<6>() && fits<7>() &&
                  fits<8>() && fits<9>() && fits<10>(),
              "a configuration needs more than 227 KB of shared memory");

template <int C, bool kBlock, bool kStreamK, bool kShortA>
KernelFn kernel_of() {
  constexpr Sm90Fp8Config c = kSm90Fp8Configs[C];
  if constexpr (kStreamK && (c.waves > 1 || c.k_pair || kShortA))
    return nullptr;  // no stream-K with waves, K pairs or short A boxes (the launcher refuses it)
  else
    return &sm90fp8::sm90_fp8_gemm_kernel<c.consumers, c.block_n, c.stages, kBlock, kStreamK, false, c.waves,
                                           c.epilogue_copies, c.k_pair, kShortA>;
}

template <int C>
KernelFn kernel_of(bool block, bool stream_k, bool short_a) {
  if (short_a) return block ? kernel_of<C, true, false, true>() : kernel_of<C, false, false, true>();
  if (block) return stream_k ? kernel_of<C, true, true, false>() : kernel_of<C, true, false, false>();
  return stream_k ? kernel_of<C, false, true, false>() : kernel_of<C, false, false, false>();
}

// Stream-K is a separate instantiation so that the kernels without it are the code they were
// before it (a shared walk cost them 7% in Suite 2: uniform-register loop state was lost); so
// are the short A boxes of a single row tile (Sm90Fp8Params::a_short_bytes, never with
// stream-K).
KernelFn kernel_for(int config, bool block, bool stream_k, bool short_a) {
  if (short_a && stream_k) return nullptr;
  static_assert(kSm90Fp8ConfigCount == 11, "one line per configuration below");
  switch (config) {
    case 0: return kernel_of<0>(block, stream_k, short_a);
    case 1: return kernel_of<1>(block, stream_k, short_a);
    case 2: return kernel_of<2>(block, stream_k, short_a);
    case 3: return kernel_of<3>(block, stream_k, short_a);
    case 4: return kernel_of<4>(block, stream_k, short_a);
    case 5: return kernel_of<5>(block, stream_k, short_a);
    case 6: return kernel_of<6>(block, stream_k, short_a);
    case 7: return kernel_of<7>(block, stream_k, short_a);
    case 8: return kernel_of<8>(block, stream_k, short_a);
    case 9: return kernel_of<9>(block, stream_k, short_a);
    case 10: return kernel_of<10>(block, stream_k, short_a);
    default: return nullptr;
  }
}

}  // namespace

Status sm90_fp8_gemm_prepare(int config, bool block_scaled) {
  if (config < 0 || config >= kSm90Fp8ConfigCount)
    return Status::Fail("lowbit: sm90_fp8_gemm: no configuration " + std::to_string(config));
  for (bool stream_k : {false, true})
    for (bool short_a : {false, true}) {
      KernelFn k = kernel_for(config, block_scaled, stream_k, short_a);
      if (k == nullptr) continue;  // stream-K with waves, K pairs or short A boxes: not instantiated
      LOWBIT_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           sm90_fp8_smem_bytes(kSm90Fp8Configs[config])));
    }
  return Status::Ok();
}

Status sm90_fp8_gemm_launch(int config, bool block_scaled, const CUtensorMap& a, const CUtensorMap& w,
                            const CUtensorMap& sa, const CUtensorMap& out, const Sm90Fp8Params& p, int grid,
                            bool pdl, cudaStream_t stream) {
  KernelFn k = kernel_for(config, block_scaled, p.sk_tiles > 0, p.a_short_bytes != 0);
  if (k == nullptr)
    return Status::Fail("lowbit: sm90_fp8_gemm: no kernel for configuration " + std::to_string(config) +
                        (p.sk_tiles > 0 ? " with stream-K" : "") + (p.a_short_bytes != 0 ? " with short A boxes" : ""));
  const Sm90Fp8Config& c = kSm90Fp8Configs[config];
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(static_cast<unsigned>((c.consumers + 1) * 128));
  cfg.dynamicSmemBytes = static_cast<size_t>(sm90_fp8_smem_bytes(c));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl && p.sk_tiles == 0 ? attr : nullptr;
  cfg.numAttrs = pdl && p.sk_tiles == 0 ? 1u : 0u;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, k, a, w, sa, out, p));
  return Status::Ok();
}

Status sm90_fp8_gemm_reduce(const Sm90Fp8Params& p, bool pdl, cudaStream_t stream) {
  const int64_t total4 = static_cast<int64_t>(p.m) * p.n / 4;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((total4 + threads - 1) / threads, 132 * 8);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1u : 0u;
  // Four splits: the kernel that loads the four parts at once (fp8_gemm.md v29).
  if (p.splits == 4)
    LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, sm90fp8::sm90_fp8_reduce_kernel<Sm90Fp8Params, 4>, p));
  else
    LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, sm90fp8::sm90_fp8_reduce_kernel<Sm90Fp8Params>, p));
  return Status::Ok();
}

}  // namespace lowbit::cuda
