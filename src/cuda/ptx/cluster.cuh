// Thread-block cluster instructions (sm_90, PTX ISA "Parallel Synchronization and
// Communication Instructions: barrier.cluster", "Data Movement: mapa", "ld" with the
// .shared::cluster state space, special registers %cluster_ctarank / %cluster_nctarank).
// One wrapper per instruction. On older architectures these paths are never taken (the
// host launches clusters only on sm_90); they trap with a message if they were.
#pragma once

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// This CTA's rank in its cluster.
LOWBIT_DEVICE uint32_t cluster_ctarank() {
#if LOWBIT_HAS_SM90
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  LOWBIT_DEVICE_TRAP("cluster_ctarank needs sm_90");
  return 0;
#endif
}

// Number of CTAs in the cluster.
LOWBIT_DEVICE uint32_t cluster_nctarank() {
#if LOWBIT_HAS_SM90
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
#else
  LOWBIT_DEVICE_TRAP("cluster_nctarank needs sm_90");
  return 1;
#endif
}

// barrier.cluster.arrive.relaxed + barrier.cluster.wait: every thread of every CTA of the
// cluster arrives and waits, without the release's memory ordering. For the barrier that only
// keeps each CTA (and its shared memory) alive until the others have read it: a reader's
// ld.shared::cluster loads are complete before it arrives, since it has used their values, so
// no ordering is needed, and the release form costs a MEMBAR.ALL.GPU per thread (ptxas's
// sm_90 code for arrive.release, also for fence.acq_rel.cluster; cuobjdump), which waits for
// every global store the thread has in flight: the epilogue's output stores, just issued.
// H200, W4 g128 f16 Suite 1 at m = 16 (three split-K layers on clusters of 4): 61.0 -> 59.5 us
// (docs/kernels/mixed_gemm.md, sm80 notes v11).
LOWBIT_DEVICE void cluster_sync_relaxed() {
#if LOWBIT_HAS_SM90
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#else
  LOWBIT_DEVICE_TRAP("cluster_sync_relaxed needs sm_90");
#endif
}

// barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every thread of every CTA
// of the cluster arrives; shared-memory writes before it are visible to the whole cluster
// after it (release / acquire at cluster scope).
LOWBIT_DEVICE void cluster_sync() {
#if LOWBIT_HAS_SM90
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
#else
  LOWBIT_DEVICE_TRAP("cluster_sync needs sm_90");
#endif
}

// mapa.shared::cluster: the address of the same shared-memory variable in CTA `rank`.
LOWBIT_DEVICE uint32_t mapa_shared(uint32_t smem_addr, uint32_t rank) {
#if LOWBIT_HAS_SM90
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr), "r"(rank));
  return r;
#else
  LOWBIT_DEVICE_TRAP("mapa needs sm_90");
  return 0;
#endif
}

// ld.shared::cluster.v4.f32: 16 bytes from (possibly another CTA's) shared memory.
LOWBIT_DEVICE float4 ld_shared_cluster_f32x4(uint32_t cluster_addr) {
#if LOWBIT_HAS_SM90
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(cluster_addr)
               : "memory");
  return v;
#else
  LOWBIT_DEVICE_TRAP("ld.shared::cluster needs sm_90");
  return float4{0.f, 0.f, 0.f, 0.f};
#endif
}

// ld.shared::cluster.f32: 4 bytes from (possibly another CTA's) shared memory.
LOWBIT_DEVICE float ld_shared_cluster_f32(uint32_t cluster_addr) {
#if LOWBIT_HAS_SM90
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(cluster_addr) : "memory");
  return v;
#else
  LOWBIT_DEVICE_TRAP("ld.shared::cluster needs sm_90");
  return 0.f;
#endif
}

}  // namespace lowbit::ptx
