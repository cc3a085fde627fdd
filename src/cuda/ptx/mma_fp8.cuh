// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (PTX ISA, "Warp Level Matrix Multiply-
// Accumulate Instructions: mma", shape .m16n8k32 with .e4m3 operands; sm_89+, PTX ISA 8.4):
// D (16 x 8, fp32) = A (16 x 32, e4m3) * B (32 x 8, e4m3) + C. The products of two e4m3
// values are exact; the sum is not an fp32 sum, see "Accumulator precision" below.
//
// Fragments ("Matrix Fragments for mma.m16n8k32", the same layout as the .s8/.u8 variant;
// CUTLASS cute::MMA_Traits<SM89_16x8x32_F32E4M3E4M3F32_TN>: ALayout ((4,8),(4,2,2)) :
// ((64,1),(16,8,256)), BLayout ((4,8),(4,2)) : ((32,1),(8,128)), CLayout SM80_16x8_Row).
// With g = lane / 4 and t = lane % 4, each thread holds 4 codes per 32-bit register, the
// lower k in the lower byte:
//   A (16 x 32, "row": k contiguous):  a[0] = A[g][4t .. 4t+3],      a[1] = A[g+8][4t .. 4t+3],
//                                       a[2] = A[g][16+4t .. 16+4t+3], a[3] = A[g+8][16+4t .. +3]
//   B (32 x 8, "col": k contiguous):   b[0] = B[4t .. 4t+3][g],      b[1] = B[16+4t .. 16+4t+3][g]
//   C / D (16 x 8, fp32):              d[0] = D[g][2t], d[1] = D[g][2t+1],
//                                       d[2] = D[g+8][2t], d[3] = D[g+8][2t+1]
//
// Accumulator precision: Ada's fp8 mma.sync (like Hopper's fp8 wgmma) does not keep a full
// fp32 accumulator: the sum of the 32 products and C is kept with about 13-14 mantissa bits
// (SageAttention2, arXiv 2411.10958: an "FP22" accumulator in mma.f32.f8.f8.f32; the
// DeepSeek-V3 technical report, "Increasing Accumulation Precision": ~14 bits on H800).
// Chaining thousands of k steps through C therefore loses precision with K; callers keep
// chains short (one 128-wide k block) and add the chain results in fp32 registers (the zero-C
// form below starts a chain).
//
// Hopper (sm_90) has no fp8 mma.sync in hardware: ptxas emulates the instruction with e4m3 -> f16
// conversions (F2FP.F16.E4M3.UNPACK_B), two HMMA.16816.F32 from a zero accumulator and four FADDs
// that add C. The sm_90 path below does the same conversion itself and chains C through the two
// m16n8k16 f16 mma (full fp32 accumulation in HMMA), which saves the FADDs:
//   e4m3 -> f16 is exact (f16 has more exponent and mantissa bits than e4m3), so the products
//   are the same; a k32 step becomes two k16 steps over a permuted k (the sum does not depend
//   on the order of k as long as A and B agree): the low halves of every A / B register
//   (k 4t, 4t+1 and 16+4t, 16+4t+1) form the first m16n8k16 step (its k 2t, 2t+1 and
//   8+2t, 8+2t+1), the high halves the second.
// The conversions are plain (non-volatile) asm without side effects, so a fragment used by
// several mma is converted once (the compiler merges identical conversions).
//
// Before sm_89 the instruction does not exist; the wrappers trap (kernels that use them are
// guarded at their entry and never reach this on older GPUs).
#pragma once

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/mma.cuh"
#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

namespace mma_fp8_detail {

// cvt.rn.f16x2.e4m3x2 (PTX ISA "cvt", sm_89+) of both 16-bit halves of a register: lo gets
// codes 0, 1 (bytes 0, 1), hi gets codes 2, 3, each as an f16x2 (lower code in the low half).
LOWBIT_DEVICE void e4m3x4_to_f16x2x2(uint32_t v, uint32_t& lo, uint32_t& hi) {
#if LOWBIT_ARCH >= 890
  asm("{\n\t"
      ".reg .b16 l, h;\n\t"
      "mov.b32 {l, h}, %2;\n\t"
      "cvt.rn.f16x2.e4m3x2 %0, l;\n\t"
      "cvt.rn.f16x2.e4m3x2 %1, h;\n\t"
      "}"
      : "=r"(lo), "=r"(hi)
      : "r"(v));
#else
  lo = hi = 0;
  LOWBIT_DEVICE_TRAP("e4m3 conversion needs sm_89");
#endif
}

// The two f16 steps of one e4m3 k32 step (the sm_90 path above): the fragments converted, then
// d = A_hi * B_hi + (A_lo * B_lo + d), or + 0 instead of + d when kZeroC.
template <bool kZeroC>
LOWBIT_DEVICE void mma_e4m3_via_f16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  uint32_t alo[4], ahi[4], blo[2], bhi[2];
#pragma unroll
  for (int r = 0; r < 4; ++r) e4m3x4_to_f16x2x2(a[r], alo[r], ahi[r]);
#pragma unroll
  for (int r = 0; r < 2; ++r) e4m3x4_to_f16x2x2(b[r], blo[r], bhi[r]);
  if constexpr (kZeroC)
    mma_m16n8k16_zero_c<__half>(d, alo, blo);
  else
    mma_m16n8k16<__half>(d, alo, blo);
  mma_m16n8k16<__half>(d, ahi, bhi);
}

}  // namespace mma_fp8_detail

// d += A * B.
LOWBIT_DEVICE void mma_m16n8k32_e4m3(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if LOWBIT_ARCH >= 900 && LOWBIT_ARCH < 1000
  mma_fp8_detail::mma_e4m3_via_f16<false>(d, a, b);
#elif LOWBIT_ARCH >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  LOWBIT_DEVICE_TRAP("mma.m16n8k32 e4m3 needs sm_89");
#endif
}

// d = A * B (C = 0: a fresh chain without zeroing registers; the zero C becomes RZ in SASS).
LOWBIT_DEVICE void mma_m16n8k32_e4m3_zero_c(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if LOWBIT_ARCH >= 900 && LOWBIT_ARCH < 1000
  mma_fp8_detail::mma_e4m3_via_f16<true>(d, a, b);
#elif LOWBIT_ARCH >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%10, %10, %10, %10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.f));
#else
  LOWBIT_DEVICE_TRAP("mma.m16n8k32 e4m3 needs sm_89");
#endif
}

}  // namespace lowbit::ptx
