// mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc (PTX ISA, "Warp Level Matrix
// Multiply-Accumulate Instructions", single-bit mma): D[i][j] = C[i][j] + popc(row i of A AND
// column j of B) over k = 128 bits, exact in int32. sm_80+ (SASS BMMA.168128.AND.POPC; on an
// H200 it issues at ~0.9 per SM clock, faster than HMMA.16816: session 16 microbenchmark,
// docs/kernels/gemv.md, "Bit-serial"). With g = lane / 4 and t = lane % 4 each thread holds
// 32 consecutive k bits per register:
//   A (16 x 128 bits, row-major): a[0] = A[g][32t .. 32t+31], a[1] = A[g+8][32t .. 32t+31]
//   B (128 x 8 bits, "col"):      b    = B[32t .. 32t+31][g]
//   C/D (16 x 8, s32):            d[0..1] = D[g][2t..2t+1], d[2..3] = D[g+8][2t..2t+1]
// What the bit-serial GEMV relies on: bit i of a[0], a[1] and of b of a lane with the same t
// stand for the same k, so any map of a lane's register bits to columns that depends only on
// (t, bit) gives the same dot products, whichever bit order the hardware counts k in.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE void mma_m16n8k128_b1_and(int32_t (&d)[4], uint32_t a0, uint32_t a1, uint32_t b) {
  asm volatile(
      "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a0), "r"(a1), "r"(b));
}

}  // namespace lowbit::ptx
