// cp.async.bulk.prefetch.L2.global (PTX ISA, "Data Movement: cp.async.bulk.prefetch",
// sm_90): one instruction asks the copy engine to bring `bytes` of global memory into L2,
// with no register, no shared memory and no completion to wait for.
//
// Used before griddep_wait() (griddepcontrol.cuh) to start streaming a kernel's first
// weights while the previous kernel of the stream finishes. L2 is the point of coherence:
// a prefetch can never make a later load see stale data, so it is safe even for memory the
// previous kernel writes. Before sm_90 this compiles to nothing (a performance hint only).
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// `gmem` 16-byte aligned, `bytes` a multiple of 16.
LOWBIT_DEVICE void prefetch_bulk_l2(const void* gmem, uint32_t bytes) {
#if LOWBIT_HAS_SM90
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(gmem), "r"(bytes) : "memory");
#endif
}

}  // namespace lowbit::ptx
