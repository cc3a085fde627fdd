// GPU-scope counters for handing data between CTAs of one grid (PTX ISA, "Memory consistency
// model", release / acquire patterns):
//   writer: every thread stores its data; the group meets at a barrier (bar.sync orders those
//           stores before what the group's thread 0 does next); thread 0 adds to the counter
//           with red.release.gpu. Release is cumulative: the stores the barrier ordered before
//           it become visible GPU-wide no later than the addition.
//   reader: thread 0 polls the counter with ld.acquire.gpu until it holds the expected value,
//           then the group meets at a barrier; its loads see the writers' data.
// No fence.sc and no returned value on the writer's side: the writer does not wait for a
// round trip to L2.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE void red_release_gpu_add(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

LOWBIT_DEVICE int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Polls until *p == expected (thread 0 of a group; the group then meets at a barrier).
LOWBIT_DEVICE void wait_eq_acquire_gpu(const int* p, int expected) {
  while (ld_acquire_gpu(p) != expected) __nanosleep(32);
}

}  // namespace lowbit::ptx
