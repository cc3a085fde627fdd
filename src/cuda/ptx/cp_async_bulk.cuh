// cp.async.bulk global -> shared (PTX ISA, "Data Movement: cp.async.bulk", sm_90): the
// bulk-copy engine (the non-tensor side of the TMA) moves `bytes` contiguous bytes from
// global into shared memory and completes them as transactions on an mbarrier
// (mbarrier.cuh: the issuing thread first declares them with arrive.expect_tx). One
// instruction per contiguous range, no registers and no per-thread issue cost, so a warp
// can keep many kilobytes in flight while it computes.
//
// fence.proxy.async.shared::cta orders this thread's earlier generic-proxy accesses of shared
// memory (the reads of a ring slot by the warp, gathered with __syncwarp()) before later
// async-proxy writes to it (the next copy into that slot).
//
// Before sm_90 these trap; their callers use cp.async with cp.async.mbarrier.arrive there.
#pragma once

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes. A CTA launched without
// a cluster is a cluster of one, so its own shared addresses are valid ::cluster addresses.
// `smem_dst`, `gmem_src` 16-byte aligned, `bytes` a positive multiple of 16.
LOWBIT_DEVICE void cp_async_bulk_g2s(uint32_t smem_dst, const void* gmem_src, uint32_t bytes, uint32_t bar) {
#if LOWBIT_HAS_SM90
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_dst),
      "l"(gmem_src), "r"(bytes), "r"(bar)
      : "memory");
#else
  LOWBIT_DEVICE_TRAP("cp.async.bulk needs sm_90");
#endif
}

// fence.proxy.async.shared::cta (sm_90; nothing to order before it).
LOWBIT_DEVICE void fence_proxy_async_shared() {
#if LOWBIT_HAS_SM90
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

}  // namespace lowbit::ptx
