// cp.async (PTX ISA, "Data Movement: cp.async", sm_80+): asynchronous 16-byte global ->
// shared copies that bypass the register file, grouped with commit_group and waited on with
// wait_group, which is what lets a multi-stage pipeline keep many loads in flight per SM.
//
// .cg caches in L2 only (the data is used once from shared memory, L1 would only be
// polluted). The L2::cache_hint form takes a policy from createpolicy (e.g. evict_first for
// streamed weights). The sm80 mixed GEMM does not use it: ptxas 13.0 placed the 64-bit
// policy in an odd uniform register pair (desc[UR1]) in some 8-bit kernels, and the
// instruction faulted with cudaErrorIllegalInstruction on H200 (run 2, docs/kernels/
// mixed_gemm.md); check `cuobjdump -sass | grep 'desc\[UR[13579]\]'` before using it.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// createpolicy.fractional.L2::evict_first.b64 (PTX ISA, "Data Movement: createpolicy").
LOWBIT_DEVICE uint64_t policy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// 16 bytes global -> shared, L2 only.
LOWBIT_DEVICE void cp_async_16(uint32_t smem_addr, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr), "l"(gmem));
}

// The same with an L2 eviction policy.
LOWBIT_DEVICE void cp_async_16_hint(uint32_t smem_addr, const void* gmem, uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(smem_addr),
               "l"(gmem), "l"(policy));
}

// 16 bytes, of which the first `src_bytes` (0 or 16) come from global and the rest are
// zero-filled (the src-size operand): a predicated load without a branch.
LOWBIT_DEVICE void cp_async_16_zfill(uint32_t smem_addr, const void* gmem, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr), "l"(gmem),
               "r"(src_bytes));
}

// 4 bytes global -> shared (cp.async.ca: sizes below 16 must go through L1), of which the
// first `src_bytes` (0 or 4) come from global and the rest is zero-filled. For small arrays
// read element by element: a 16-byte copy with src-size < 16 is legal PTX but
// compute-sanitizer memcheck counts it as a 16-byte read and reports the bytes past the end
// of a short allocation (seen 2026-11-21, H200, a 1-element weight-scale grid).
LOWBIT_DEVICE void cp_async_4_zfill(uint32_t smem_addr, const void* gmem, uint32_t src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes));
}

LOWBIT_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;" ::); }

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
LOWBIT_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

}  // namespace lowbit::ptx
