// Act-order weights on sm90_mixed_gemm: the packed column count k' (and group count groups') of
// such a weight lives in its index buffer on the device, and the host, which encodes the tensor
// maps, never reads it (run() stays asynchronous and graph-capturable). So the host encodes the
// five maps with k as a placeholder and this kernel, launched just before the GEMM, copies them
// to the workspace with the extents and strides of k' (tensormap.cuh): the activations (m, k')
// gathered by sm80_mixed_gemm_permute_activations(), the weight strips of k' x bits / 2 u32, the
// groups' scale and zero rows.
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "cuda/common/check.hpp"
#include "cuda/common/launch_attrs.hpp"
#include "cuda/dequant/smxx_tiled_layout.hpp"
#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/tensormap.cuh"

namespace lowbit::cuda {

namespace {

struct Maps {
  CUtensorMap m[kSm90MixedActOrderMaps];
};

// Thread i re-extents map i of (x, x_last, w, s, z); `out` is 64-byte aligned.
__global__ void sm90_mixed_act_order_maps_kernel(const __grid_constant__ Maps tmpl, const int32_t* index, int bits,
                                                 int maps, CUtensorMap* out) {
  // With PDL: the next kernel (the gather) may launch now; the maps are written only after the
  // previous kernel (the last call's GEMM, which reads them) has completed.
  ptx::griddep_launch_dependents();
  ptx::griddep_wait();
  const int i = threadIdx.x;
  if (i >= maps) return;
  const uint32_t kp = static_cast<uint32_t>(index[0]), groups = static_cast<uint32_t>(index[1]);
  const uint4* src = reinterpret_cast<const uint4*>(&tmpl.m[i]);
  uint4* dst = reinterpret_cast<uint4*>(out + i);
#pragma unroll
  for (int j = 0; j < static_cast<int>(sizeof(CUtensorMap) / sizeof(uint4)); ++j) dst[j] = src[j];
  CUtensorMap* map = out + i;
  if (i < 2) {  // activations: (m, k') 16-bit, rows of k' x 2 bytes
    ptx::tensormap_replace_global_dim<0>(map, kp);
    ptx::tensormap_replace_global_stride<0>(map, uint64_t{kp} * 2);
  } else if (i == 2) {  // weights: n / 16 strips of k' x bits / 2 u32
    ptx::tensormap_replace_global_dim<0>(map, kp * bits / 2);
    ptx::tensormap_replace_global_stride<0>(map, uint64_t{kp} * bits * 2);
  } else {  // scale / zero rows: (groups', n)
    ptx::tensormap_replace_global_dim<1>(map, groups);
  }
  ptx::fence_tensormap_release();
}

}  // namespace

Status sm90_mixed_gemm_act_order_maps(const CUtensorMap* tmpl, int maps, const int32_t* index, int bits,
                                      CUtensorMap* out, bool pdl, cudaStream_t stream) {
  if (maps < 1 || maps > kSm90MixedActOrderMaps)
    return Status::Fail("lowbit: sm90_mixed_gemm: act-order maps must be 1.." + std::to_string(kSm90MixedActOrderMaps));
  Maps t{};
  for (int i = 0; i < maps; ++i) t.m[i] = tmpl[i];
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1] = {pdl_launch_attr()};
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1 : 0;
  LOWBIT_CUDA_TRY(cudaLaunchKernelEx(&cfg, &sm90_mixed_act_order_maps_kernel, t, index, bits, maps, out));
  return Status::Ok();
}

}  // namespace lowbit::cuda
