// ld.shared by 32-bit shared-window address (PTX ISA, "ld"): for data another agent (the TMA,
// cp.async) wrote into shared memory, read after the barrier that publishes it. volatile +
// "memory": never hoisted above that barrier's wait.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

LOWBIT_DEVICE uint32_t ld_shared_u16(uint32_t addr) {
  uint16_t v;
  asm volatile("ld.shared.b16 %0, [%1];" : "=h"(v) : "r"(addr) : "memory");
  return v;
}

LOWBIT_DEVICE uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
  return v;
}

}  // namespace lowbit::ptx
