// ldmatrix.sync.aligned.m8n8.{x2,x4}.shared.b16 (PTX ISA, "Warp-level matrix load
// instruction: ldmatrix"): loads 2 or 4 8x8 matrices of 16-bit elements from shared memory.
// Lanes 8i..8i+7 give the addresses of the 8 rows (16 bytes each) of matrix i; afterwards
// register i of lane l holds row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of matrix i:
// exactly the mma.m16n8k16 B fragment when the rows are B's columns (k contiguous).
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// smem_addr: a shared-state-space address (see cvta_shared()).
LOWBIT_DEVICE void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

// Only lanes 0..15 supply addresses.
LOWBIT_DEVICE void ldmatrix_x2(uint32_t (&r)[2], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr));
}

}  // namespace lowbit::ptx
