// Tensor maps changed on the device (PTX ISA, "tensormap.replace" and "fence.proxy.tensormap",
// sm_90a): a kernel copies a map the host encoded (cuTensorMapEncodeTiled) into global memory
// and replaces fields of the copy that only the device knows, e.g. an extent read from a buffer
// the host never reads. Used by sm90_mixed_gemm for act-order weights, whose packed column
// count k' lives in the weight's index buffer (docs/kernels/mixed_gemm.md, "Act-order").
//
// Visibility: tensormap.replace and the copy are generic-proxy writes; the TMA unit reads a map
// through the tensormap proxy. So the writing thread ends with a release fence of the tensormap
// proxy (fence_tensormap_release), and every thread that then issues TMA copies with the map
// first acquires it (fence_tensormap_acquire, gpu scope: the writer is another kernel earlier
// in the stream). Stream order alone does not order the two proxies.
//
// Field ordinals for a 2-D map: global_dim 0 is the innermost extent (elements), 1 the outer
// one; global_stride 0 is the byte stride of dimension 1 (a multiple of 16), as in the
// globalStrides array of cuTensorMapEncodeTiled.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// tensormap.replace.tile.global_dim.global.b1024.b32 [map], ord, extent.
template <int kOrd>
LOWBIT_DEVICE void tensormap_replace_global_dim(CUtensorMap* map, uint32_t extent) {
#if LOWBIT_HAS_SM90A
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], %1, %2;" ::"l"(map), "n"(kOrd), "r"(extent)
               : "memory");
#else
  LOWBIT_DEVICE_TRAP("tensormap.replace needs sm_90a");
#endif
}

// tensormap.replace.tile.global_stride.global.b1024.b64 [map], ord, bytes.
template <int kOrd>
LOWBIT_DEVICE void tensormap_replace_global_stride(CUtensorMap* map, uint64_t bytes) {
#if LOWBIT_HAS_SM90A
  asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], %1, %2;" ::"l"(map), "n"(kOrd), "l"(bytes)
               : "memory");
#else
  LOWBIT_DEVICE_TRAP("tensormap.replace needs sm_90a");
#endif
}

// fence.proxy.tensormap::generic.release.gpu: this thread's generic writes of maps (copies,
// replaced fields) are released to the tensormap proxy at gpu scope.
LOWBIT_DEVICE void fence_tensormap_release() {
#if LOWBIT_HAS_SM90A
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
#endif
}

// fence.proxy.tensormap::generic.acquire.gpu [map], 128: the TMA copies this thread issues
// afterwards with `map` see what the releasing thread wrote.
LOWBIT_DEVICE void fence_tensormap_acquire(const CUtensorMap* map) {
#if LOWBIT_HAS_SM90A
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
#endif
}

}  // namespace lowbit::ptx
