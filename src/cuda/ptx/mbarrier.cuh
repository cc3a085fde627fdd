// mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier",
// sm_80; the expect_tx form, try_wait and the init fence sm_90): a barrier object in shared
// memory (8 bytes, 8-byte aligned) that counts arrivals per phase and, on sm_90, bytes of
// asynchronous copies (tx-count). A phase completes when its pending arrival count (and
// tx-count) reaches zero; the barrier then re-arms with the count given at init. Waiters name
// the phase by its parity (phase k has parity k & 1), so a waiter must never fall two phases
// behind (every user of these wrappers guarantees it by construction and says how).
//
// One wrapper per instruction; `bar` is the shared-state-space address (cvta_shared()).
// The sm_90-only forms trap before sm_90 (their callers take another path there).
#pragma once

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// mbarrier.init.shared.b64: `count` expected arrivals per phase, phase 0 current.
LOWBIT_DEVICE void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// fence.mbarrier_init.release.cluster (sm_90): makes initialized barriers visible to the
// asynchronous proxy (the bulk-copy engine's complete_tx) before the first copy names them.
// Before sm_90 there is no such proxy and no fence is needed.
LOWBIT_DEVICE void fence_mbarrier_init() {
#if LOWBIT_HAS_SM90
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// mbarrier.arrive.shared.b64 (release, CTA scope): one arrival of the executing thread.
// Its earlier shared-memory reads and writes happen before the phase completes.
LOWBIT_DEVICE void mbarrier_arrive(uint32_t bar) {
  asm volatile(
      "{\n\t.reg .b64 st;\n\t"
      "mbarrier.arrive.shared.b64 st, [%0];\n\t}" ::"r"(bar)
      : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 (sm_90): one arrival plus `bytes` of expected
// asynchronous-copy transactions in the current phase.
LOWBIT_DEVICE void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
#if LOWBIT_HAS_SM90
  asm volatile(
      "{\n\t.reg .b64 st;\n\t"
      "mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(bar),
      "r"(bytes)
      : "memory");
#else
  LOWBIT_DEVICE_TRAP("mbarrier.arrive.expect_tx needs sm_90");
#endif
}

// cp.async.mbarrier.arrive.noinc.shared.b64 (sm_80): an arrival that happens once every
// cp.async this thread issued before it has completed. .noinc: the arrival counts against
// the count given at init (one per arriving thread), it does not add a pending arrival.
LOWBIT_DEVICE void cp_async_mbarrier_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(bar) : "memory");
}

// Blocks until the phase of parity `parity` has completed (acquire, CTA scope: what the
// arriving threads and the completed copies wrote is visible after it). sm_90:
// mbarrier.try_wait.parity, which may suspend the thread in hardware until the phase
// completes or a time limit passes; before: mbarrier.test_wait.parity in a loop.
LOWBIT_DEVICE void mbarrier_wait_parity(uint32_t bar, uint32_t parity) {
#if LOWBIT_HAS_SM90
  asm volatile(
      "{\n\t.reg .pred done;\n\t"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT_%=;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
#else
  asm volatile(
      "{\n\t.reg .pred done;\n\t"
      "WAIT_%=:\n\t"
      "mbarrier.test_wait.parity.shared.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT_%=;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}

}  // namespace lowbit::ptx
