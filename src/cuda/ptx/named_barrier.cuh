// Named barriers (PTX ISA, "bar / barrier"): 16 hardware barriers per CTA; id 0 is
// __syncthreads()'s. `count` (a multiple of 32) threads take part in one use: bar.sync waits
// until `count` threads have arrived (itself included), bar.arrive counts the executing
// thread's warp without waiting. A producer / consumer pair of warpgroups can thus hand off
// an event per use: the signalling side arrives, the waiting side syncs, count = both sides'
// threads. Uses of one id must strictly alternate between the two sides.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

LOWBIT_DEVICE void named_barrier_arrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

}  // namespace lowbit::ptx
