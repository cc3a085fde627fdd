// Tensor-map TMA loads (PTX ISA, "cp.async.bulk.tensor", sm_90): the TMA unit copies a box
// of a 2-D tensor described by a CUtensorMap (built on the host by cuTensorMapEncodeTiled:
// base, sizes, strides, box, swizzle) into shared memory, zero-filling the parts of the box
// outside the tensor, and completes the box's bytes as transactions on an mbarrier (the
// issuing thread declares them first with mbarrier_arrive_expect_tx, mbarrier.cuh). The full
// box size is always counted, out-of-bounds parts included.
//
// The map must live in constant / parameter space or global memory: kernels take it as a
// `const __grid_constant__ CUtensorMap` parameter and pass its generic address here.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes: box at
// coordinates (c0 = innermost, c1) into `smem_dst` (1024-byte aligned for the 128-byte
// swizzle, 128-byte aligned otherwise). A CTA launched without a cluster is a cluster of one.
LOWBIT_DEVICE void tma_load_2d(uint32_t smem_dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar) {
#if LOWBIT_HAS_SM90
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
#else
  LOWBIT_DEVICE_TRAP("cp.async.bulk.tensor needs sm_90");
#endif
}

// cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: the TMA writes the box at `smem_src`
// to the tensor at (c0, c1), dropping the parts outside the tensor. Asynchronous: the writes
// to shared memory that feed it must be made visible to the async proxy first
// (fence.proxy.async.shared::cta by every writing thread, then a barrier), and `smem_src`
// may be rewritten only after tma_store_wait_read() (the store has read it). Completion is
// tracked per thread in bulk groups (tma_store_commit()).
LOWBIT_DEVICE void tma_store_2d(const CUtensorMap* map, uint32_t smem_src, int32_t c0, int32_t c1) {
#if LOWBIT_HAS_SM90
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(smem_src)
               : "memory");
#else
  LOWBIT_DEVICE_TRAP("cp.async.bulk.tensor needs sm_90");
#endif
}

// cp.async.bulk.commit_group: closes the bulk group of this thread's stores issued so far.
LOWBIT_DEVICE void tma_store_commit() {
#if LOWBIT_HAS_SM90
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}

// cp.async.bulk.wait_group.read 0: this thread's committed stores have finished READING
// shared memory (their global writes may still be in flight).
LOWBIT_DEVICE void tma_store_wait_read() {
#if LOWBIT_HAS_SM90
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
}

// cp.async.bulk.wait_group 0: this thread's committed stores are complete.
LOWBIT_DEVICE void tma_store_wait_all() {
#if LOWBIT_HAS_SM90
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// prefetch.tensormap: brings the map's 128 bytes into the TMA unit's cache before first use.
LOWBIT_DEVICE void tma_prefetch_descriptor(const CUtensorMap* map) {
#if LOWBIT_HAS_SM90
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
#endif
}

}  // namespace lowbit::ptx
