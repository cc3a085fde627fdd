// mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 (PTX ISA, "Warp Level Matrix Multiply-
// Accumulate Instructions", "Matrix Fragments for mma.m16n8k32"): unsigned 8-bit A (weight
// codes 0..255), signed 8-bit B (int8 activations), exact int32 accumulation. sm_80+.
// With g = lane / 4 and t = lane % 4, each thread holds (4 bytes per register, lower k in
// the lower byte):
//   A (16 x 32, row-major): a[0] = A[g][4t..4t+3],    a[1] = A[g+8][4t..4t+3],
//                           a[2] = A[g][16+4t..+3],   a[3] = A[g+8][16+4t..+3]
//   B (32 x 8, "col"):      b[0] = B[4t..4t+3][g],    b[1] = B[16+4t..+3][g]
//   C/D (16 x 8, s32):      d[0..1] = D[g][2t..2t+1], d[2..3] = D[g+8][2t..2t+1]
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE void mma_m16n8k32_u8s8(int32_t (&d)[4], const uint32_t (&a)[4],
                                     const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 (same PTX ISA sections; sm_80+): both
// operands signed 8-bit (int8 W8A8: weight codes x activation codes, each in [-128, 127]),
// d += A * B with exact int32 accumulation (no rounding: every product is at most 2^14 in
// magnitude, so a sum over k < 2^17 cannot overflow; int8_gemm_common.hpp). The fragments
// are the ones above, which are also those of the e4m3 m16n8k32 (ptx/mma_fp8.cuh): a kernel
// written for one 8-bit element type loads the other's fragments unchanged.
LOWBIT_DEVICE void mma_m16n8k32_s8s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace lowbit::ptx
