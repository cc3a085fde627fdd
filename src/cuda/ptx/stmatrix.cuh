// stmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA, "Warp-level matrix store instruction:
// stmatrix", sm_90): the inverse of ldmatrix.x4. Lanes 8i..8i+7 give the addresses of the 8
// rows (16 bytes each) of matrix i; register i of lane l holds row l / 4, elements 2 (l % 4)
// and 2 (l % 4) + 1 of matrix i. So the four registers of an mma.m16n8k16 A fragment (a0:
// rows 0-7 x k 0-7, a1: rows 8-15 x k 0-7, a2: rows 0-7 x k 8-15, a3: rows 8-15 x k 8-15)
// are stored as a 16 x 16 tile by one instruction when lane l addresses row
// 8 ((l / 8) % 2) + l % 8, k half l / 16.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// smem_addr: a shared-state-space address (see cvta_shared()), 16-byte aligned.
LOWBIT_DEVICE void stmatrix_x4(uint32_t smem_addr, const uint32_t (&r)[4]) {
#if LOWBIT_HAS_SM90A || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900)
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
#else
  LOWBIT_DEVICE_TRAP("stmatrix needs sm_90");
#endif
}

}  // namespace lowbit::ptx
