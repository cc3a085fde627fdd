// st.shared.v4.b32 by 32-bit shared-window address (PTX ISA, "st"): 16 bytes another lane
// reads with ldmatrix after a __syncwarp. volatile + "memory": kept before that barrier.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE void st_shared_v4(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

LOWBIT_DEVICE void st_shared_u16(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b16 [%0], %1;" ::"r"(addr), "h"(static_cast<uint16_t>(v)) : "memory");
}

}  // namespace lowbit::ptx
