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

}  // namespace lowbit::ptx
